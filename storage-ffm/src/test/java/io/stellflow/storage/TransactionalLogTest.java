package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions in the log: BEGIN/COMMIT/ABORT markers, the open transactions in the producer
 * state, the first unstable offset and the aborted-transaction index, on leader, follower, replay.
 */
class TransactionalLogTest {
    @TempDir
    Path dir;

    @TempDir
    Path followerDir;

    private final ManualEnvironment clock = new ManualEnvironment(1_000_000);

    /** ~1 KiB segments: a few batches roll. */
    private static final LogConfig SMALL = LogConfig.builder()
            .segmentBytes(1024)
            .indexIntervalBytes(0)
            .indexMaxBytes(1024)
            .fileDeleteDelayMs(1000)
            .retentionBytes(1)
            .build();

    private UnifiedLog open(Path d) throws IOException {
        return UnifiedLog.open(d, SMALL, clock.environment());
    }

    private static long txn(UnifiedLog log, long pid, int seq, long txnSeq, String... values) throws IOException {
        ByteBuf b = IdempotentLogTest.batch(pid, 0, seq, 1000, values);
        try {
            return log.appendTransactionalAsLeader(b, 0, null, txnSeq);
        } finally {
            b.release();
        }
    }

    private static long marker(UnifiedLog log, long pid, boolean commit) throws IOException {
        return log.appendTransactionMarker(pid, (short) 0, commit, 3, 11, 0);
    }

    /** Control types of the stored batches from {@code from}, -1 for a data batch. */
    private static List<Integer> kinds(UnifiedLog log, long from) throws IOException {
        ByteBuf all = Unpooled.buffer();
        try {
            log.readInto(from, Integer.MAX_VALUE, Long.MAX_VALUE, true, all);
            List<Integer> kinds = new ArrayList<>();
            for (int p = 0; p < all.writerIndex(); p += RecordBatchLayout.batchSize(all, p)) {
                kinds.add(ControlRecordLayout.isControl(all, p) ? (int) ControlRecordLayout.type(all, p) : -1);
            }
            return kinds;
        } finally {
            all.release();
        }
    }

    @Test
    void aBeginMarkerPrecedesOnlyTheFirstBatchOfATransaction() throws IOException {
        try (UnifiedLog log = open(dir)) {
            assertThat(log.firstUnstableOffset()).isEqualTo(ProducerStateManager.NO_OPEN_TRANSACTION);
            assertThat(txn(log, 7, 0, 4, "a", "b")).isEqualTo(1); // BEGIN at 0
            assertThat(txn(log, 7, 2, 4, "c")).isEqualTo(3);
            assertThat(log.firstUnstableOffset()).isZero();
            assertThat(log.producerState().openTransactionSequence(7)).isEqualTo(4);
            assertThat(marker(log, 7, true)).isEqualTo(4);
            assertThat(log.firstUnstableOffset()).isEqualTo(ProducerStateManager.NO_OPEN_TRANSACTION);
            assertThat(kinds(log, 0))
                    .containsExactly((int) ControlRecordLayout.BEGIN, -1, -1, (int) ControlRecordLayout.COMMIT);
            // The next transaction of the same producer gets its own BEGIN; its sequences go on.
            assertThat(txn(log, 7, 3, 5, "d")).isEqualTo(6);
            assertThat(log.firstUnstableOffset()).isEqualTo(5);
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).isEmpty();
        }
    }

    @Test
    void aBatchOrMarkerOfAnEarlierTransactionSequenceIsRefusedAndWritesNothing() throws IOException {
        try (UnifiedLog log = open(dir)) {
            txn(log, 7, 0, 4, "a");
            long end = log.logEndOffset();
            assertThat(txn(log, 7, 1, 3, "late")).isEqualTo(UnifiedLog.INVALID_TXN_STATE);
            assertThat(log.logEndOffset()).isEqualTo(end);
            assertThat(txn(log, 7, 1, 4, "b")).isEqualTo(end);
            // A late marker of an earlier transaction (sequence 3) cannot close transaction 4.
            assertThat(log.appendTransactionMarker(7, (short) 0, false, 0, 3, 0))
                    .isEqualTo(UnifiedLog.INVALID_TXN_STATE);
            assertThat(log.firstUnstableOffset()).isZero();
            assertThat(log.appendTransactionMarker(7, (short) 0, true, 0, 4, 0)).isEqualTo(end + 1);
            assertThat(log.firstUnstableOffset()).isEqualTo(ProducerStateManager.NO_OPEN_TRANSACTION);
        }
    }

    @Test
    void markersFenceOldEpochsAndAreHarmlessWithoutAnOpenTransaction() throws IOException {
        try (UnifiedLog log = open(dir)) {
            ByteBuf b = IdempotentLogTest.batch(7, 2, 0, 1000, "a");
            log.appendTransactionalAsLeader(b, 0, null, 1);
            b.release();
            long end = log.logEndOffset();
            assertThat(log.appendTransactionMarker(7, (short) 1, true, 0, 1, 0))
                    .isEqualTo(UnifiedLog.INVALID_PRODUCER_EPOCH);
            assertThat(log.logEndOffset()).isEqualTo(end);
            assertThat(log.appendTransactionMarker(7, (short) 2, false, 0, 1, 0))
                    .isEqualTo(end);
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).containsExactly(new AbortedTxn(7, 0, 2, 3));
            // A retried marker, and one for a producer never seen: appended, nothing changes.
            assertThat(log.appendTransactionMarker(7, (short) 2, false, 0, 1, 0))
                    .isEqualTo(end + 1);
            assertThat(log.appendTransactionMarker(99, (short) 0, true, 0, 1, 0))
                    .isEqualTo(end + 2);
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).hasSize(1);
            assertThat(log.firstUnstableOffset()).isEqualTo(ProducerStateManager.NO_OPEN_TRANSACTION);
            assertThat(log.producerState().size()).isEqualTo(1);
        }
    }

    @Test
    void aMarkerOfADeposedCoordinatorIsFencedOnLeaderFollowerAndRestart() throws IOException {
        try (UnifiedLog log = open(dir)) {
            txn(log, 7, 0, 1, "a");
            assertThat(log.appendTransactionMarker(7, (short) 0, true, 5, 1, 0)).isEqualTo(2);
            txn(log, 7, 1, 2, "b"); // BEGIN 3, 4
            long end = log.logEndOffset();
            assertThat(log.appendTransactionMarker(7, (short) 0, false, 4, 2, 0))
                    .isEqualTo(UnifiedLog.TRANSACTION_COORDINATOR_FENCED);
            assertThat(log.logEndOffset()).isEqualTo(end);
            assertThat(log.firstUnstableOffset()).isEqualTo(3);
            try (UnifiedLog follower = open(followerDir)) {
                ByteBuf copy = Unpooled.buffer();
                log.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, copy);
                follower.appendAsFollower(copy, 0);
                copy.release();
                assertThat(follower.producerState().coordinatorEpoch(7)).isEqualTo(5);
            }
        }
        try (UnifiedLog log = open(dir)) {
            assertThat(log.producerState().coordinatorEpoch(7))
                    .as("kept in the snapshot")
                    .isEqualTo(5);
            assertThat(log.appendTransactionMarker(7, (short) 0, false, 6, 2, 0))
                    .isEqualTo(5);
        }
    }

    @Test
    void theLastStableOffsetFollowsTwoInterleavedProducersAndNeverGoesBack() throws IOException {
        try (UnifiedLog log = open(dir)) {
            List<Long> lso = new ArrayList<>();
            Runnable sample = () -> lso.add(Math.min(log.logEndOffset(), log.firstUnstableOffset()));
            txn(log, 1, 0, 1, "a"); // BEGIN 0, data 1
            sample.run();
            txn(log, 2, 0, 1, "x"); // BEGIN 2, data 3
            sample.run();
            txn(log, 1, 1, 1, "b"); // 4
            sample.run();
            assertThat(log.firstUnstableOffset()).isZero();
            marker(log, 1, true); // 5: producer 2's transaction is now the oldest open one
            sample.run();
            assertThat(log.firstUnstableOffset()).isEqualTo(2);
            txn(log, 1, 2, 2, "c"); // BEGIN 6, data 7
            sample.run();
            marker(log, 2, false); // 8: producer 1's new transaction is the oldest
            sample.run();
            assertThat(log.firstUnstableOffset()).isEqualTo(6);
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).containsExactly(new AbortedTxn(2, 2, 8, 6));
            marker(log, 1, true); // 9
            sample.run();
            assertThat(lso).containsExactly(0L, 0L, 0L, 2L, 2L, 6L, 10L);
            assertThat(lso).isSorted();
        }
    }

    @Test
    void abortsGoToTheTxnIndexOfTheMarkersSegmentAndTheQueryOverlaps() throws IOException {
        try (UnifiedLog log = open(dir)) {
            txn(log, 1, 0, 1, "a");
            marker(log, 1, false); // BEGIN 0, data 1, ABORT 2
            txn(log, 1, 1, 2, "b");
            marker(log, 1, false); // BEGIN 3, data 4, ABORT 5
            List<AbortedTxn> all = log.abortedTransactions(0, Long.MAX_VALUE);
            assertThat(all).containsExactly(new AbortedTxn(1, 0, 2, 3), new AbortedTxn(1, 3, 5, 6));
            assertThat(log.abortedTransactions(3, 4)).containsExactly(new AbortedTxn(1, 3, 5, 6));
            assertThat(log.abortedTransactions(0, 1)).containsExactly(new AbortedTxn(1, 0, 2, 3));
            assertThat(log.abortedTransactions(6, 100)).isEmpty();
            Path index = AbortedTxnIndex.path(dir, 0);
            assertThat(Files.size(index)).isEqualTo(2L * AbortedTxnIndexLayout.ENTRY_SIZE);
        }
    }

    @Test
    void openTransactionsAndAbortsSurviveACleanRestart() throws IOException {
        try (UnifiedLog log = open(dir)) {
            txn(log, 2, 0, 7, "x"); // BEGIN 0 stays open
            txn(log, 1, 0, 1, "a"); // BEGIN 2
            marker(log, 1, false); // ABORT 4: the LSO after it (0) is below its first offset (2)
        }
        try (UnifiedLog log = open(dir)) {
            assertThat(log.producerStateReplayedFrom())
                    .as("from the close snapshot")
                    .isEqualTo(log.logEndOffset());
            assertThat(log.firstUnstableOffset()).isZero();
            assertThat(log.producerState().openTransactionSequence(2)).isEqualTo(7);
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE))
                    .as("read back from the .txnindex")
                    .containsExactly(new AbortedTxn(1, 2, 4, 0));
            assertThat(txn(log, 2, 1, 7, "y")).as("no second BEGIN").isEqualTo(5);
        }
    }

    @Test
    void aTornTxnIndexAfterACrashIsRebuiltFromTheLog() throws IOException {
        UnifiedLog log = open(dir);
        txn(log, 1, 0, 1, "a");
        marker(log, 1, false);
        txn(log, 2, 0, 1, "x");
        marker(log, 2, false);
        txn(log, 3, 0, 1, "open");
        log.crashForTesting();
        Path index = AbortedTxnIndex.path(dir, 0);
        try (FileChannel ch = FileChannel.open(index, StandardOpenOption.WRITE)) {
            ch.truncate(AbortedTxnIndexLayout.ENTRY_SIZE + 10); // the second entry torn
        }
        // What stellflow-dump-log.sh prints of it: the whole entry and the torn one reported.
        SegmentDump.TxnIndexDump dump = SegmentDump.txnIndex(index);
        assertThat(dump.entries()).containsExactly(new SegmentDump.TxnIndexEntry(1, 0, 2, 3));
        assertThat(dump.problems()).singleElement().asString().startsWith("torn entry: 10 trailing byte(s)");
        try (UnifiedLog reopened = open(dir)) {
            assertThat(reopened.abortedTransactions(0, Long.MAX_VALUE))
                    .containsExactly(new AbortedTxn(1, 0, 2, 3), new AbortedTxn(2, 3, 5, 6));
            assertThat(reopened.firstUnstableOffset()).isEqualTo(6);
            assertThat(Files.size(index)).isEqualTo(2L * AbortedTxnIndexLayout.ENTRY_SIZE);
        }
        assertThat(SegmentDump.txnIndex(index))
                .isEqualTo(new SegmentDump.TxnIndexDump(
                        List.of(new SegmentDump.TxnIndexEntry(1, 0, 2, 3), new SegmentDump.TxnIndexEntry(2, 3, 5, 6)),
                        List.of()));
        // Without any index file or snapshot, the full replay rebuilds the same.
        Files.delete(index);
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.toString().endsWith(ProducerSnapshotLayout.SUFFIX))
                    .toList()) {
                Files.delete(p);
            }
        }
        try (UnifiedLog reopened = open(dir)) {
            assertThat(reopened.producerStateReplayedFrom()).isZero();
            assertThat(reopened.abortedTransactions(0, Long.MAX_VALUE)).hasSize(2);
            assertThat(reopened.firstUnstableOffset()).isEqualTo(6);
        }
    }

    @Test
    void aFollowerRebuildsTheSameOpenTransactionsAndAborts() throws IOException {
        try (UnifiedLog leader = open(dir);
                UnifiedLog follower = open(followerDir)) {
            txn(leader, 1, 0, 1, "a");
            txn(leader, 2, 0, 1, "x");
            marker(leader, 1, false);
            txn(leader, 2, 1, 1, "y");
            txn(leader, 3, 0, 9, "z");
            marker(leader, 2, true);
            ByteBuf copy = Unpooled.buffer();
            leader.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, copy);
            assertThat(follower.appendAsFollower(copy, 0)).isEqualTo(leader.logEndOffset());
            copy.release();
            assertThat(follower.firstUnstableOffset())
                    .isEqualTo(leader.firstUnstableOffset())
                    .isEqualTo(6);
            assertThat(follower.abortedTransactions(0, Long.MAX_VALUE))
                    .isEqualTo(leader.abortedTransactions(0, Long.MAX_VALUE))
                    .containsExactly(new AbortedTxn(1, 0, 4, 2));
            assertThat(follower.producerState().entries())
                    .isEqualTo(leader.producerState().entries());
            assertThat(Files.exists(AbortedTxnIndex.path(followerDir, 0))).isTrue();
        }
    }

    @Test
    void truncationBelowAnAbortRemovesItsEntryAndReopensTheTransaction() throws IOException {
        try (UnifiedLog log = open(dir)) {
            txn(log, 1, 0, 1, "a");
            txn(log, 1, 1, 1, "b");
            marker(log, 1, false); // BEGIN 0, 1, 2, ABORT 3
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).hasSize(1);
            log.truncateTo(3);
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).isEmpty();
            assertThat(Files.exists(AbortedTxnIndex.path(dir, 0))).isFalse();
            assertThat(log.firstUnstableOffset())
                    .as("the transaction is open again")
                    .isZero();
            log.truncateTo(0);
            assertThat(log.firstUnstableOffset()).isEqualTo(ProducerStateManager.NO_OPEN_TRANSACTION);
        }
    }

    @Test
    void retentionDeletesTheTxnIndexWithItsSegment() throws IOException {
        try (UnifiedLog log = open(dir)) {
            txn(log, 1, 0, 1, "a");
            marker(log, 1, false);
            int seq = 1;
            while (log.segmentCount() < 3) {
                txn(log, 1, seq++, 5, "fill" + seq);
                marker(log, 1, true);
            }
            assertThat(Files.exists(AbortedTxnIndex.path(dir, 0))).isTrue();
            assertThat(log.deleteOldSegments(log.logEndOffset())).isPositive();
            assertThat(Files.exists(AbortedTxnIndex.path(dir, 0)))
                    .as("renamed for deletion")
                    .isFalse();
            assertThat(Files.exists(
                            dir.resolve(AbortedTxnIndex.path(dir, 0).getFileName() + LogSegment.DELETED_SUFFIX)))
                    .isTrue();
            clock.advance(1000);
            assertThat(Files.exists(
                            dir.resolve(AbortedTxnIndex.path(dir, 0).getFileName() + LogSegment.DELETED_SUFFIX)))
                    .isFalse();
            assertThat(log.abortedTransactions(log.logStartOffset(), Long.MAX_VALUE))
                    .isEmpty();
        }
    }

    @Test
    void compactionKeepsMarkersAndTheTxnIndex() throws IOException {
        LogConfig compacted = LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(0)
                .indexMaxBytes(1024)
                .cleanupPolicy("compact")
                .minCleanableDirtyRatio(0)
                .fileDeleteDelayMs(1000)
                .build();
        try (UnifiedLog log = UnifiedLog.open(dir, compacted, clock.environment())) {
            txn(log, 1, 0, 1, "a");
            marker(log, 1, false); // BEGIN 0, key "ka" at 1, ABORT 2
            // Producer 1's next transaction (BEGIN 3, "kz" at 4, COMMIT 5) holds its last batch, which
            // compaction keeps whole; the superseded batch at 1 is no longer it.
            txn(log, 1, 1, 2, "z");
            marker(log, 1, true);
            int seq = 0;
            while (log.segmentCount() < 3) {
                ByteBuf b = IdempotentLogTest.batch(5, 0, seq++, 1000, "a"); // supersedes key "ka"
                log.appendIdempotentAsLeader(b, 0, null);
                b.release();
            }
            assertThat(log.compact(log.logEndOffset()).recordsRemoved()).isPositive();
            List<Integer> kinds = kinds(log, 0);
            assertThat(kinds.subList(0, 2))
                    .as("the superseded record is gone, both markers stay")
                    .containsExactly((int) ControlRecordLayout.BEGIN, (int) ControlRecordLayout.ABORT);
            assertThat(Files.size(AbortedTxnIndex.path(dir, 0))).isEqualTo(AbortedTxnIndexLayout.ENTRY_SIZE);
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).containsExactly(new AbortedTxn(1, 0, 2, 3));
        }
        try (UnifiedLog log = UnifiedLog.open(dir, compacted, clock.environment())) {
            assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).containsExactly(new AbortedTxn(1, 0, 2, 3));
        }
    }

    /** The first stored batch from offset 0: its base offset and whether it is a data batch. */
    private static String firstBatch(UnifiedLog log) throws IOException {
        ByteBuf all = Unpooled.buffer();
        try {
            log.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, all);
            return RecordBatchLayout.baseOffsetDelta(all, 0)
                    + (ControlRecordLayout.isControl(all, 0) ? " control" : " data");
        } finally {
            all.release();
        }
    }

    @Test
    void compactionLetsNeitherAnAbortedNorAnOpenTransactionSupersedeAValue() throws IOException {
        LogConfig compacted = LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(0)
                .indexMaxBytes(1024)
                .cleanupPolicy("compact")
                .minCleanableDirtyRatio(0)
                .fileDeleteDelayMs(1000)
                .build();
        for (boolean aborted : new boolean[] {true, false}) {
            Path d = dir.resolve(aborted ? "aborted" : "open");
            try (UnifiedLog log = UnifiedLog.open(d, compacted, clock.environment())) {
                ByteBuf plain = IdempotentLogTest.batch(-1, -1, -1, 1000, "a"); // key "ka" at 0
                log.appendAsLeader(plain, 0, null);
                plain.release();
                txn(log, 1, 0, 1, "a"); // BEGIN 1, "ka" again at 2
                if (aborted) {
                    marker(log, 1, false); // ABORT 3
                }
                while (log.segmentCount() < 3) {
                    ByteBuf other = IdempotentLogTest.batch(-1, -1, -1, 1000, "x");
                    log.appendAsLeader(other, 0, null);
                    other.release();
                }
                log.compact(log.logEndOffset());
                assertThat(firstBatch(log))
                        .as(aborted ? "an aborted value supersedes nothing" : "nothing past an open transaction")
                        .isEqualTo("0 data");
                assertThat(log.logEndOffset()).isGreaterThan(4);
            }
        }
    }
}
