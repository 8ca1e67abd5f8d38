package io.stellflow.storage;

import static io.stellflow.storage.ProducerStateManager.APPEND;
import static io.stellflow.storage.ProducerStateManager.TOO_MANY_PRODUCER_IDS_ON_BROKER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code producer.id.max.per.broker}: one count over every log of a broker (issue #20). */
class BrokerProducerIdsTest {
    private static final long DAY_MS = 24L * 60 * 60 * 1000;

    @TempDir
    Path dir;

    private final ManualEnvironment clock = new ManualEnvironment(1_000_000);

    /** Small segments: a few batches roll (and write snapshots). */
    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);

    /** As a leader appends: checks and, when in order, records one record at {@code offset}. */
    private static int send(ProducerStateManager m, long pid, int seq, long offset, long nowMs) {
        int code = m.check(pid, (short) 0, seq, seq, nowMs);
        if (code == APPEND) {
            m.update(pid, (short) 0, seq, seq, offset, offset, nowMs);
        }
        return code;
    }

    @Test
    void aNewIdBeyondTheBrokerBoundIsRefusedOnEveryPartitionWhileKnownIdsGoOnAndExpiryFreesRoom() {
        BrokerProducerIds broker = new BrokerProducerIds(3);
        ProducerStateManager a = new ProducerStateManager(DAY_MS, 10, broker);
        ProducerStateManager b = new ProducerStateManager(DAY_MS, 10, broker);
        assertThat(send(a, 1, 0, 0, 0)).isEqualTo(APPEND);
        assertThat(send(a, 2, 0, 1, 10)).isEqualTo(APPEND);
        assertThat(send(b, 3, 0, 0, 20)).isEqualTo(APPEND);
        assertThat(broker.count()).isEqualTo(3);

        // Each partition is far below producer.id.max.per.partition (10): the broker's bound refuses.
        assertThat(send(a, 4, 0, 2, 30)).isEqualTo(TOO_MANY_PRODUCER_IDS_ON_BROKER);
        assertThat(send(b, 5, 0, 1, 30)).isEqualTo(TOO_MANY_PRODUCER_IDS_ON_BROKER);
        assertThat(a.epoch(4)).as("nothing recorded").isEqualTo((short) -1);
        assertThat(broker.count()).isEqualTo(3);
        assertThat(send(a, 1, 1, 2, 30)).as("known ids go on").isEqualTo(APPEND);
        assertThat(send(b, 3, 1, 1, 30)).isEqualTo(APPEND);
        assertThat(broker.count()).isEqualTo(3);

        // Producer 2 (last append at 10) expires in partition a: its retention check frees room on b.
        assertThat(send(b, 5, 0, 2, 10 + DAY_MS))
                .as("b has nothing to expire itself")
                .isEqualTo(TOO_MANY_PRODUCER_IDS_ON_BROKER);
        assertThat(a.removeExpired(10 + DAY_MS)).isEqualTo(1);
        assertThat(broker.count()).isEqualTo(2);
        assertThat(send(b, 5, 0, 2, 10 + DAY_MS)).isEqualTo(APPEND);
        assertThat(broker.count()).isEqualTo(3);
        // A partition that is itself due expires its own ids when a new one comes.
        assertThat(send(a, 6, 0, 3, 30 + DAY_MS)).isEqualTo(APPEND);
        assertThat(a.epoch(1)).as("expired on the way").isEqualTo((short) -1);
        assertThat(broker.count()).isEqualTo(3);
    }

    @Test
    void followersAndMarkersAreCountedButNeverRefusedAndClearAndLoadKeepTheCountRight() {
        BrokerProducerIds broker = new BrokerProducerIds(2);
        ProducerStateManager m = new ProducerStateManager(DAY_MS, 10, broker);
        for (long pid = 1; pid <= 3; pid++) {
            m.update(pid, (short) 0, 0, 0, pid, pid, 0); // a follower's appends: what the leader accepted
        }
        m.beginTransaction(4, (short) 0, 10, 1, 0); // a BEGIN marker of a producer new here
        assertThat(m.size()).isEqualTo(4);
        assertThat(broker.count())
                .as("above the bound: a replica holds what its leader took")
                .isEqualTo(4);
        assertThat(m.check(5, (short) 0, 0, 0, 0)).isEqualTo(TOO_MANY_PRODUCER_IDS_ON_BROKER);
        assertThat(m.check(1, (short) 0, 1, 1, 0)).isEqualTo(APPEND);

        var entries = m.entries();
        m.clear();
        assertThat(broker.count()).isZero();
        m.load(entries);
        assertThat(broker.count()).isEqualTo(4);
        m.load(entries); // load clears first: never counted twice
        assertThat(broker.count()).isEqualTo(4);
        assertThat(m.removeExpired(DAY_MS))
                .as("the open transaction's producer stays")
                .isEqualTo(3);
        assertThat(broker.count()).isEqualTo(1);
    }

    @Test
    void theLogsOfOneEnvironmentShareTheBoundAcrossRestartsCrashesAndFollowers() throws IOException {
        LogEnvironment env = clock.environment().withProducerState(new ProducerStateConfig(60_000, 10, 2));
        BrokerProducerIds broker = env.producerIds();
        Path aDir = dir.resolve("a");
        Path bDir = dir.resolve("b");
        try (UnifiedLog a = UnifiedLog.open(aDir, SMALL, env);
                UnifiedLog b = UnifiedLog.open(bDir, SMALL, env)) {
            assertThat(append(a, IdempotentLogTest.batch(1, 0, 0, 1000, "a"))).isZero();
            assertThat(append(b, IdempotentLogTest.batch(2, 0, 0, 1000, "b"))).isZero();
            assertThat(append(b, IdempotentLogTest.batch(3, 0, 0, 1000, "c")))
                    .isEqualTo(UnifiedLog.TOO_MANY_PRODUCER_IDS_ON_BROKER);
            assertThat(b.logEndOffset()).as("nothing written").isEqualTo(1);
            assertThat(append(a, IdempotentLogTest.batch(1, 0, 1, 1000, "a1"))).isEqualTo(1);
            assertThat(append(b, IdempotentLogTest.batch(2, 0, 0, 1000, "b")))
                    .as("a retry of a known id")
                    .isZero();
            assertThat(broker.count()).isEqualTo(2);
        }
        assertThat(broker.count()).as("closed logs keep no producer ids").isZero();

        try (UnifiedLog a = UnifiedLog.open(aDir, SMALL, env);
                UnifiedLog b = UnifiedLog.open(bDir, SMALL, env)) {
            assertThat(broker.count()).as("reloaded from the snapshots").isEqualTo(2);
            assertThat(append(a, IdempotentLogTest.batch(3, 0, 0, 1000, "c")))
                    .isEqualTo(UnifiedLog.TOO_MANY_PRODUCER_IDS_ON_BROKER);
            b.crashForTesting();
            assertThat(broker.count()).isEqualTo(1);
        }
        Path cDir = dir.resolve("c");
        try (UnifiedLog b = UnifiedLog.open(bDir, SMALL, env);
                UnifiedLog follower = UnifiedLog.open(cDir, SMALL, env)) {
            assertThat(broker.count()).as("b replayed after its crash").isEqualTo(1);
            ByteBuf copied = IdempotentLogTest.batch(9, 0, 0, 1000, "f");
            try {
                follower.appendAsFollower(copied, 0);
            } finally {
                copied.release();
            }
            assertThat(follower.producerState().epoch(9)).isZero();
            assertThat(broker.count())
                    .as("a follower is counted, never refused")
                    .isEqualTo(2);
            assertThat(append(b, IdempotentLogTest.batch(4, 0, 0, 1000, "d")))
                    .isEqualTo(UnifiedLog.TOO_MANY_PRODUCER_IDS_ON_BROKER);
            follower.close(); // the partition moved away
            assertThat(append(b, IdempotentLogTest.batch(4, 0, 0, 1000, "d"))).isEqualTo(1);
            assertThat(broker.count()).isEqualTo(2);

            clock.advance(60_000);
            b.deleteOldSegments(b.logEndOffset()); // the retention check expires both of b's ids
            assertThat(broker.count()).isZero();
            assertThat(append(b, IdempotentLogTest.batch(5, 0, 0, 1000, "e"))).isEqualTo(2);
        }
        assertThat(broker.count()).isZero();
    }

    @Test
    void theBoundMustBePositive() {
        assertThatThrownBy(() -> new BrokerProducerIds(0)).hasMessageContaining("producer.id.max.per.broker");
        assertThatThrownBy(() -> new ProducerStateConfig(1, 1, 0))
                .hasMessageContaining("producer.id.max.per.broker must be > 0");
        assertThat(ProducerStateConfig.DEFAULTS.maxProducerIdsPerBroker())
                .isEqualTo(ProducerStateConfig.DEFAULT_MAX_PRODUCER_IDS_PER_BROKER);
    }

    private static long append(UnifiedLog log, ByteBuf b) throws IOException {
        try {
            return log.appendIdempotentAsLeader(b, 0, null);
        } finally {
            b.release();
        }
    }
}
