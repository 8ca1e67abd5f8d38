package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checker must catch what it is meant to catch: replicas written with the real storage
 * ({@link UnifiedLog}), read back from disk by {@link ReplicaLog}, compared by {@link ReplicaCheck};
 * and the online checks of {@link Ledger}. Each case plants one fault and expects exactly its kind.
 */
class ReplicaCheckTest {
    private static final String TOPIC = "t";
    private static final LogConfig CONFIG =
            LogConfig.builder().segmentBytes(1024).build();

    @TempDir
    Path dir;

    /** Writes {@code values} as one-record batches with leader epoch {@code epoch} to broker {@code index}'s replica. */
    private Path write(int index, int epoch, List<String> values) throws IOException {
        Path logDir = dir.resolve("broker-" + index);
        try (UnifiedLog log = UnifiedLog.open(logDir.resolve(TOPIC + "-0"), CONFIG)) {
            for (String v : values) {
                ByteBuf b = Unpooled.buffer();
                RecordBatchBuilder builder = new RecordBatchBuilder(b, 1_000L);
                builder.append(1_000L, null, v.getBytes(StandardCharsets.UTF_8));
                builder.close();
                log.appendAsLeader(b, epoch);
                b.release();
            }
        }
        return logDir;
    }

    private static List<String> values(String prefix, int n) {
        return java.util.stream.IntStream.range(0, n).mapToObj(i -> prefix + i).toList();
    }

    private static Ledger ackedLedger(List<String> values) {
        Ledger ledger = new Ledger(1);
        for (int i = 0; i < values.size(); i++) {
            ledger.acked(0, i, values.get(i));
        }
        return ledger;
    }

    @Test
    void identicalReplicasAcrossSeveralSegmentsPass() throws IOException {
        List<String> v = values("p0-", 60); // ~70 bytes a batch: several 1 KiB segments
        Ledger ledger = ackedLedger(v);
        List<ReplicaLog> logs = List.of(
                ReplicaLog.read(0, write(0, 3, v), TOPIC, 0),
                ReplicaLog.read(1, write(1, 3, v), TOPIC, 0),
                ReplicaLog.read(2, write(2, 3, v), TOPIC, 0));
        assertThat(Files.list(dir.resolve("broker-0").resolve(TOPIC + "-0"))
                        .filter(p -> p.toString().endsWith(".log"))
                        .count())
                .isGreaterThan(1);
        assertThat(logs.get(0).logEndOffset()).isEqualTo(60);
        assertThat(logs.get(0).records()).extracting(ReplicaLog.Rec::value).isEqualTo(v);
        assertThat(ReplicaCheck.check(ledger, 0, 0, logs, Long.MAX_VALUE, true)).isZero();
        assertThat(ReplicaCheck.check(ledger, 0, 0, logs, 60, false)).isZero();
    }

    @Test
    void aReplicaMissingCommittedRecordsIsCaught() throws IOException {
        List<String> v = values("p0-", 30);
        Ledger ledger = ackedLedger(v);
        List<ReplicaLog> logs = List.of(
                ReplicaLog.read(0, write(0, 1, v), TOPIC, 0),
                ReplicaLog.read(1, write(1, 1, v.subList(0, 20)), TOPIC, 0));
        assertThat(ReplicaCheck.check(ledger, 0, 0, logs, 30, false)).isPositive();
        assertThat(ledger.kinds(0)).contains("REPLICA_MISSING", "ACKED_MISSING_ON_REPLICA");
        Ledger below = ackedLedger(v.subList(0, 20));
        assertThat(ReplicaCheck.check(below, 0, 0, logs, 20, false))
                .as("nothing is missing below the bound")
                .isZero();
        assertThat(ReplicaCheck.check(below, 1, 0, logs, Long.MAX_VALUE, true)).isPositive();
        assertThat(below.kinds(1)).contains("REPLICA_LEO_DIFFERS");
    }

    @Test
    void twoValuesAtOneOffsetAndDifferentEpochsAreCaught() throws IOException {
        List<String> a = values("p0-", 10);
        List<String> b = new java.util.ArrayList<>(a);
        b.set(7, "p1-99");
        Ledger ledger = ackedLedger(a);
        List<ReplicaLog> logs =
                List.of(ReplicaLog.read(0, write(0, 1, a), TOPIC, 0), ReplicaLog.read(1, write(1, 1, b), TOPIC, 0));
        ReplicaCheck.check(ledger, 0, 0, logs, Long.MAX_VALUE, true);
        assertThat(ledger.kinds(0)).contains("REPLICA_DIVERGED", "REPLICA_BYTES_DIFFER", "ACKED_MISSING_ON_REPLICA");

        Ledger epochs = ackedLedger(a);
        List<ReplicaLog> sameValuesOtherEpoch = List.of(logs.get(0), ReplicaLog.read(2, write(2, 2, a), TOPIC, 0));
        ReplicaCheck.check(epochs, 0, 0, sameValuesOtherEpoch, Long.MAX_VALUE, true);
        assertThat(epochs.kinds(0)).isEqualTo("{REPLICA_BYTES_DIFFER=10}");
    }

    @Test
    void aTornTailIsDroppedLikeRecoveryWould() throws IOException {
        List<String> v = values("p0-", 5);
        Path logDir = write(0, 1, v);
        Path seg = logDir.resolve(TOPIC + "-0").resolve("00000000000000000000.log");
        long size = Files.size(seg);
        try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
            ch.truncate(size - 3);
        }
        ReplicaLog log = ReplicaLog.read(0, logDir, TOPIC, 0);
        assertThat(log.logEndOffset()).isEqualTo(4);
        assertThat(log.droppedTailBytes()).isPositive();
    }

    @Test
    void theLedgerCatchesHwRegressionRecordsAboveTheHwRewritesAndLostAcks() {
        Ledger ledger = new Ledger(1);
        ledger.round(5);
        ledger.acked(0, 0, "p0-0");
        ledger.acked(0, 1, "p0-1");
        ledger.highWatermark(0, 2, 1);
        ledger.consumed(0, 0, "p0-0", 2, 1);
        ledger.consumed(0, 1, "p0-1", 2, 1);
        ledger.verifyAcked(0, 2);
        assertThat(ledger.totalViolations()).isZero();

        ledger.highWatermark(0, 1, 2);
        ledger.consumed(0, 1, "p1-7", 1, 2);
        ledger.acked(0, 1, "p1-8");
        assertThat(ledger.kinds(5)).isEqualTo("{ABOVE_HW=1, ACK_CONFLICT=1, HW_DECREASED=1, OFFSET_REWRITTEN=1}");

        Ledger lost = new Ledger(1);
        lost.acked(0, 0, "p0-0");
        lost.acked(0, 1, "p0-1");
        lost.consumed(0, 0, "p9-9", 5, 1);
        lost.verifyAcked(0, 2);
        assertThat(lost.kinds(0)).isEqualTo("{ACKED_LOST=1, ACKED_UNREAD=1}");
        assertThat(lost.failingRounds()).containsExactly(0);
        assertThat(lost.report()).contains("acknowledged p0-0 at offset 0", "p9-9");
    }
}
