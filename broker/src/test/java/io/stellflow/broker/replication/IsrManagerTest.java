package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ISR manager against a scripted controller: what it sends (broker epoch, leader epoch,
 * partition epoch, new ISR), and how each answer is handled: accepted or stale (wait for the
 * metadata, no resend), not answered or timed out (resend the same proposal), refused (drop it).
 */
class IsrManagerTest {
    private static final UUID TOPIC_ID = UUID.fromString("00000000-0000-0000-0000-000000000007");
    private static final long LAG_MS = 1_000;

    @TempDir
    Path dir;

    private UnifiedLog log;
    private Partition partition;
    private final AtomicLong nowMs = new AtomicLong(10_000);
    private final List<AlterPartitionRequest> sent = new ArrayList<>();
    private final Deque<Function<AlterPartitionRequest, AlterPartitionResponse>> answers = new ArrayDeque<>();
    private IsrManager manager;

    @BeforeEach
    void setUp() throws IOException {
        log = UnifiedLog.open(
                dir.resolve("t-0"), new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
        partition = new Partition("t", 0, 0, log, 1, 0L);
        partition.updateAssignment(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2, 3), 7);
        partition.becomeLeader(4, nowMs.get());
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1L);
        builder.append(1L, null, "v".getBytes(StandardCharsets.UTF_8));
        builder.close();
        partition.appendAsLeader(out);
        manager = new IsrManager(
                1,
                request -> {
                    sent.add(request);
                    return answers.isEmpty()
                            ? AlterPartitionResponse.getDefaultInstance()
                            : answers.poll().apply(request);
                },
                () -> 42L,
                visit -> visit.accept(partition),
                LAG_MS,
                nowMs::get);
    }

    @AfterEach
    void tearDown() throws IOException {
        manager.close();
        log.close();
    }

    private static Function<AlterPartitionRequest, AlterPartitionResponse> answer(ErrorCode code) {
        return r -> AlterPartitionResponse.newBuilder().setError(code).build();
    }

    /** Followers 2 and 3: 2 caught up, 3 silent past the lag time. */
    private void lagFollowerThree() {
        partition.recordFollowerFetch(2, 1, nowMs.get());
        nowMs.addAndGet(LAG_MS + 1);
        partition.recordFollowerFetch(2, 1, nowMs.get());
    }

    @Test
    void aShrinkIsSentWithTheEpochsAndWaitsForTheMetadata() {
        lagFollowerThree();
        manager.checkAll();
        assertThat(sent).hasSize(1);
        AlterPartitionRequest r = sent.get(0);
        assertThat(r.getBrokerId()).isEqualTo(1);
        assertThat(r.getBrokerEpoch()).isEqualTo(42L);
        assertThat(MetadataRecords.uuid(r.getTopicId())).isEqualTo(TOPIC_ID);
        assertThat(r.getPartition()).isZero();
        assertThat(r.getLeaderEpoch()).isEqualTo(4);
        assertThat(r.getPartitionEpoch()).isEqualTo(7);
        assertThat(r.getNewIsrList()).containsExactly(1, 2);
        assertThat(partition.inSyncReplicas()).as("not before the metadata").containsExactly(1, 2, 3);
        assertThat(partition.pendingIsrChange().awaitingMetadata()).isTrue();

        manager.checkAll();
        assertThat(sent)
                .as("accepted: no resend while the metadata is on its way")
                .hasSize(1);

        partition.updateAssignment(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2), 8);
        assertThat(partition.pendingIsrChange()).isNull();
        assertThat(partition.highWatermark()).isEqualTo(1);
        manager.checkAll();
        assertThat(sent).hasSize(1);
    }

    @Test
    void aStaleProposalWaitsForTheNextMetadataAndAnUnansweredOneIsSentAgain() {
        lagFollowerThree();
        answers.add(answer(ErrorCode.INVALID_UPDATE_VERSION));
        manager.checkAll();
        manager.checkAll();
        assertThat(sent).as("INVALID_UPDATE_VERSION: wait for metadata").hasSize(1);
        partition.updateAssignment(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2, 3), 9); // someone else's change
        assertThat(partition.pendingIsrChange()).isNull();

        answers.add(r -> {
            throw new ControllerUnavailableException("no controller", null);
        });
        answers.add(answer(ErrorCode.REQUEST_TIMED_OUT));
        manager.checkAll(); // proposes again, on epoch 9: not answered
        manager.checkAll(); // the same proposal again: timed out
        manager.checkAll(); // and again: accepted
        assertThat(sent).hasSize(4);
        for (AlterPartitionRequest r : sent.subList(1, 4)) {
            assertThat(r.getPartitionEpoch()).isEqualTo(9);
            assertThat(r.getNewIsrList()).containsExactly(1, 2);
        }
        assertThat(partition.pendingIsrChange().awaitingMetadata()).isTrue();
    }

    @Test
    void aRefusedProposalIsDroppedAndTheNextCheckDecidesAfresh() {
        lagFollowerThree();
        answers.add(answer(ErrorCode.INELIGIBLE_REPLICA));
        manager.checkAll();
        assertThat(partition.pendingIsrChange()).isNull();
        assertThat(partition.maximalIsr()).containsExactly(1, 2, 3);
        manager.checkAll();
        assertThat(sent).hasSize(2);
    }

    @Test
    void noProposalBeforeRegistrationOrWhenNotTheLeader() {
        IsrManager unregistered = new IsrManager(
                1,
                request -> {
                    sent.add(request);
                    return AlterPartitionResponse.getDefaultInstance();
                },
                () -> -1L,
                visit -> visit.accept(partition),
                LAG_MS,
                nowMs::get);
        try {
            lagFollowerThree();
            unregistered.checkAll();
            assertThat(sent).isEmpty();
            partition.becomeFollower(2, 5);
            manager.checkAll();
            assertThat(sent).isEmpty();
        } finally {
            unregistered.close();
        }
    }
}
