package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.stellflow.controller.image.ApplyResult;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.protocol.Errors;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link BrokerMarkerWriter}'s per-partition outcomes with a fake leader side: a leader change is
 * retried at the leader of the newest image, an unreachable broker is retried, a refusal because the
 * producer moved past the transaction counts as done with a WARN, any other refusal fails the write, the deadline fails it, a deleted topic needs no marker.
 */
class BrokerMarkerWriterTest {
    private static final UUID TOPIC = new UUID(7, 7);

    @RegisterExtension
    final LogLines lines = LogLines.of(BrokerMarkerWriter.class);

    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor();
    private final List<String> calls = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        retries.shutdownNow();
    }

    /** Topic "t" with one partition per entry of {@code leaders}. */
    private static MetadataImage image(int... leaders) {
        return image("t", leaders);
    }

    /** {@code topic} with one partition per entry of {@code leaders} (-1: none); also for {@link TxnForwarderTest}. */
    static MetadataImage image(String topic, int... leaders) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(TopicRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setName(topic)
                .build()));
        for (int p = 0; p < leaders.length; p++) {
            records.add(MetadataRecords.of(PartitionRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(TOPIC))
                    .setPartition(p)
                    .setLeader(leaders[p])
                    .setLeaderEpoch(1)
                    .setPartitionEpoch(1)
                    .addAllReplicas(List.of(1, 2, 3))
                    .addAllIsr(leaders[p] < 0 ? List.of(1) : List.of(1, 2, 3))
                    .build()));
        }
        ApplyResult r = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, records);
        assertThat(r.ok()).as(r.message()).isTrue();
        return r.image();
    }

    private static TransactionMarkerRequest request(String... partitions) {
        List<TransactionPartition> list = new ArrayList<>();
        for (String p : partitions) {
            int dash = p.lastIndexOf('-');
            list.add(new TransactionPartition(p.substring(0, dash), Integer.parseInt(p.substring(dash + 1))));
        }
        return new TransactionMarkerRequest("tx", list, 1000, (short) 2, true, 4, 9);
    }

    private static CompletableFuture<short[]> codes(short... codes) {
        return CompletableFuture.completedFuture(codes);
    }

    @Test
    void aLeaderChangeIsRetriedAtTheNewLeaderAndEveryMarkerCarriesTheRequest() throws Exception {
        AtomicReference<MetadataImage> image = new AtomicReference<>(image(2, 3));
        BrokerMarkerWriter writer = new BrokerMarkerWriter(
                image::get,
                (leader, targets, marker, timeoutMs) -> {
                    calls.add(leader + ":" + targets);
                    assertThat(marker.producerId()).isEqualTo(1000);
                    assertThat(marker.producerEpoch()).isEqualTo((short) 2);
                    assertThat(marker.commit()).isTrue();
                    assertThat(marker.coordinatorEpoch()).isEqualTo(4);
                    assertThat(marker.transactionSequence()).isEqualTo(9);
                    assertThat(timeoutMs).isPositive().isLessThanOrEqualTo(BrokerMarkerWriter.ATTEMPT_TIMEOUT_MS);
                    if (leader == 2) {
                        image.set(image(1, 3)); // the election the answer reports
                        return codes(Errors.NOT_LEADER_OR_FOLLOWER);
                    }
                    return codes(Errors.NONE);
                },
                retries,
                System::currentTimeMillis);

        writer.writeMarkers(request("t-0", "t-1")).get(5, TimeUnit.SECONDS);

        assertThat(calls).containsExactlyInAnyOrder("2:[t-0]", "3:[t-1]", "1:[t-0]");
    }

    @Test
    void anUnreachableLeaderAndAMarkerNotYetReplicatedAreSentAgain() throws Exception {
        AtomicLong attempts = new AtomicLong();
        BrokerMarkerWriter writer = new BrokerMarkerWriter(
                () -> image(2),
                (leader, targets, marker, timeoutMs) -> switch ((int) attempts.incrementAndGet()) {
                    case 1 -> CompletableFuture.failedFuture(new IOException("connection refused"));
                    case 2 -> codes(Errors.REQUEST_TIMED_OUT);
                    default -> codes(Errors.NONE);
                },
                retries,
                System::currentTimeMillis);

        writer.writeMarkers(request("t-0")).get(5, TimeUnit.SECONDS);

        assertThat(attempts).hasValue(3);
    }

    @Test
    void aRefusalBecauseTheProducerMovedPastTheTransactionCountsAsDoneWithOneWarning() throws Exception {
        AtomicLong attempts = new AtomicLong();
        BrokerMarkerWriter writer = new BrokerMarkerWriter(
                () -> image(2, 2, 3, 3),
                (leader, targets, marker, timeoutMs) -> {
                    attempts.incrementAndGet();
                    return leader == 2
                            ? codes(Errors.NONE, Errors.TRANSACTION_COORDINATOR_FENCED)
                            : codes(Errors.INVALID_PRODUCER_EPOCH, Errors.INVALID_TXN_STATE);
                },
                retries,
                System::currentTimeMillis);

        writer.writeMarkers(request("t-0", "t-1", "t-2", "t-3")).get(5, TimeUnit.SECONDS);

        assertThat(attempts).as("never sent again: a refusal is permanent").hasValue(2);
        assertThat(lines.at(Level.WARN))
                .singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage())
                        .contains("producer 1000 epoch 2 (transactional id tx, sequence 9)")
                        .contains("t-1: TRANSACTION_COORDINATOR_FENCED")
                        .contains("t-2: INVALID_PRODUCER_EPOCH")
                        .contains("t-3: INVALID_TXN_STATE"));
    }

    @Test
    void anyOtherRefusalFailsTheWriteNamingThePartitionAndTheCode() {
        BrokerMarkerWriter writer = new BrokerMarkerWriter(
                () -> image(2, 2),
                (leader, targets, marker, timeoutMs) -> codes(Errors.NONE, Errors.CORRUPT_MESSAGE),
                retries,
                System::currentTimeMillis);

        assertThatThrownBy(() -> writer.writeMarkers(request("t-0", "t-1")).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasMessageContaining("t-1: CORRUPT_MESSAGE");
    }

    @Test
    void aPartitionThatNeverGetsItsMarkerFailsTheWriteAtTheDeadline() {
        AtomicLong now = new AtomicLong(1_000_000);
        BrokerMarkerWriter writer = new BrokerMarkerWriter(
                () -> image(PartitionImage.NO_LEADER),
                (leader, targets, marker, timeoutMs) -> codes(Errors.NONE),
                retries,
                () -> now.addAndGet(5_000)); // 5 s pass between two readings

        assertThatThrownBy(() -> writer.writeMarkers(request("t-0")).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasMessageContaining("not written within " + BrokerMarkerWriter.DEADLINE_MS + " ms");
    }

    @Test
    void aPartitionOfADeletedTopicNeedsNoMarker() throws Exception {
        BrokerMarkerWriter writer = new BrokerMarkerWriter(
                () -> image(2),
                (leader, targets, marker, timeoutMs) -> {
                    calls.add(leader + ":" + targets);
                    return codes(Errors.NONE);
                },
                retries,
                System::currentTimeMillis);

        writer.writeMarkers(request("t-0", "gone-0")).get(5, TimeUnit.SECONDS);

        assertThat(calls).containsExactly("2:[t-0]");
    }
}
