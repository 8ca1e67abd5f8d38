package io.stellflow.broker.append;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * acks=-1 waits ({@link PendingProduce#appended}, {@link DelayedProduce}) on a real partition with
 * follower 2: answered when the HW passes the records, REQUEST_TIMED_OUT at the timeout,
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR falls below min.insync.replicas, NOT_LEADER_OR_FOLLOWER
 * when leadership moves; v0 responses carry 7 instead of the codes from 32. The timer is driven by
 * the test.
 */
class DelayedProduceTest {
    private static final UUID TOPIC_ID = UUID.fromString("00000000-0000-0000-0000-000000000005");

    @TempDir
    Path dir;

    private UnifiedLog log;
    private Partition partition;
    private final ManualTimer timer = new ManualTimer();

    /** A timer whose tasks run only when the test says so. */
    private static final class ManualTimer implements Timer {
        final List<TimerTask> tasks = new ArrayList<>();
        final List<Long> delaysMs = new ArrayList<>();

        @Override
        public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
            tasks.add(task);
            delaysMs.add(unit.toMillis(delay));
            Timer self = this;
            return new Timeout() {
                private boolean cancelled;

                @Override
                public Timer timer() {
                    return self;
                }

                @Override
                public TimerTask task() {
                    return task;
                }

                @Override
                public boolean isExpired() {
                    return false;
                }

                @Override
                public boolean isCancelled() {
                    return cancelled;
                }

                @Override
                public boolean cancel() {
                    cancelled = true;
                    return true;
                }
            };
        }

        void fireAll() throws Exception {
            for (TimerTask t : List.copyOf(tasks)) {
                t.run(null);
            }
        }

        @Override
        public Set<Timeout> stop() {
            return Set.of();
        }
    }

    @BeforeEach
    void setUp() throws IOException {
        log = UnifiedLog.open(
                dir.resolve("t-0"), new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
        partition = new Partition("t", 0, 0, log, 1, 0L);
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 3);
        partition.becomeLeader(2, System.currentTimeMillis());
        partition.minInsyncReplicas(2);
        partition.recordFollowerFetch(2, 0, System.currentTimeMillis());
    }

    @AfterEach
    void tearDown() throws IOException {
        log.close();
    }

    /** Appends 3 records as leader and parks their acks=-1 slot; returns the channel the answer goes to. */
    private EmbeddedChannel appendAndPark(short version, short acks) throws IOException {
        EmbeddedChannel ch = new EmbeddedChannel();
        RequestContext context = new RequestContext(ch, RequestHeader.of(ApiKeys.PRODUCE, version, 7, "test"));
        PendingProduce pending = new PendingProduce(context, new String[] {"t"}, new int[] {0}, acks, 1500, timer);
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1L);
        for (int i = 0; i < 3; i++) {
            builder.append(1L, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        builder.close();
        int epoch = partition.leaderEpoch();
        long base = partition.appendAsLeader(out);
        pending.appended(0, partition, new PartitionResponse(0, Errors.NONE, base, epoch, -1L, 0L), base + 3);
        return ch;
    }

    private static PartitionResponse answer(EmbeddedChannel ch) {
        ByteBuf frame = ch.readOutbound();
        assertThat(frame).as("answered").isNotNull();
        try {
            frame.skipBytes(4);
            assertThat(ResponseHeader.read(frame).correlationId()).isEqualTo(7);
            return ProduceResponse.read(frame).responses().get(0).partitions().get(0);
        } finally {
            frame.release();
        }
    }

    @Test
    void answeredOnceTheHighWatermarkPassesTheRecords() throws IOException {
        EmbeddedChannel ch = appendAndPark((short) 1, (short) -1);
        assertThat((Object) ch.readOutbound()).as("waiting for follower 2").isNull();
        assertThat(timer.delaysMs).containsExactly(1500L);
        partition.recordFollowerFetch(2, 2, System.currentTimeMillis());
        assertThat((Object) ch.readOutbound()).as("HW 2 of 3").isNull();
        partition.recordFollowerFetch(2, 3, System.currentTimeMillis());
        PartitionResponse r = answer(ch);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        assertThat(r.baseOffset()).isZero();
        assertThat(partition.listenerCount()).as("unregistered").isZero();
    }

    @Test
    void timesOutWithRequestTimedOutInV1AndBrokerNotAvailableInV0() throws Exception {
        EmbeddedChannel v1 = appendAndPark((short) 1, (short) -1);
        EmbeddedChannel v0 = appendAndPark((short) 0, (short) -1);
        timer.fireAll();
        PartitionResponse r1 = answer(v1);
        assertThat(r1.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT);
        assertThat(r1.baseOffset()).isEqualTo(-1L);
        assertThat(answer(v0).errorCode()).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
        assertThat(partition.logEndOffset()).as("the records stay").isEqualTo(6);
        assertThat(partition.listenerCount()).isZero();
    }

    @Test
    void anIsrBelowTheMinimumWhileWaitingGivesNotEnoughReplicasAfterAppend() throws IOException {
        EmbeddedChannel v1 = appendAndPark((short) 1, (short) -1);
        EmbeddedChannel v0 = appendAndPark((short) 0, (short) -1);
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1), 4);
        assertThat(partition.highWatermark())
                .as("the shrink let the HW pass the records")
                .isEqualTo(6);
        assertThat(answer(v1).errorCode()).isEqualTo(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        assertThat(answer(v0).errorCode()).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
    }

    @Test
    void aLeadershipChangeWhileWaitingGivesNotLeaderOrFollower() throws IOException {
        EmbeddedChannel ch = appendAndPark((short) 0, (short) -1);
        partition.becomeFollower(2, 3);
        assertThat(answer(ch).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }

    @Test
    void acksOneIsAnsweredAtOnceWithoutATimer() throws IOException {
        EmbeddedChannel ch = appendAndPark((short) 1, (short) 1);
        assertThat(answer(ch).errorCode()).isEqualTo(Errors.NONE);
        assertThat(partition.highWatermark()).isZero();
        assertThat(timer.tasks).isEmpty();
    }
}
