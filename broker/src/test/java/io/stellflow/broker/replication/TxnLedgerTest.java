package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The transactional checker's judgements on hand-made histories: each anomaly it hunts is found,
 * and a clean history passes (so a green checker run means something).
 */
class TxnLedgerTest {
    private final Ledger ledger = new Ledger(3);
    private final TxnLedger txns = new TxnLedger(ledger, 3);

    /** A transaction with one batch per {@code (partition, base offset, values...)} triple, all acknowledged. */
    private TxnLedger.Txn txn(String name, Object[]... batches) {
        TxnLedger.Txn t = txns.begin(name);
        for (Object[] b : batches) {
            int partition = (Integer) b[0];
            long base = (Long) b[1];
            List<String> values = List.of((String[]) b[2]);
            txns.sending(t, partition, values).baseOffset = base;
        }
        return t;
    }

    private static Object[] batch(int partition, long base, String... values) {
        return new Object[] {partition, base, values};
    }

    @Test
    void aCommittedTransactionReadWholeIsCleanAndItsCountsAreKept() {
        TxnLedger.Txn t = txn("c", batch(0, 1, "a", "b"), batch(1, 1, "c"));
        txns.read(0, 1, "a");
        txns.read(0, 2, "b");
        txns.read(1, 1, "c");
        txns.outcome(t, TxnLedger.Outcome.COMMITTED);
        txns.evaluate(new long[] {3, 2, 0});

        assertThat(ledger.totalViolations()).isZero();
        assertThat(txns.unjudged()).isZero();
        assertThat(txns.roundCounts(new long[4])).isEqualTo("txn=1c/0a/0u read=3");
    }

    @Test
    void aTransactionIsJudgedOnlyOnceTheReaderPassedAllItsWrites() {
        TxnLedger.Txn t = txn("c", batch(0, 1, "a"), batch(2, 5, "b"));
        txns.read(0, 1, "a");
        txns.outcome(t, TxnLedger.Outcome.COMMITTED);
        txns.evaluate(new long[] {2, 0, 5}); // partition 2 not read past offset 5 yet
        assertThat(txns.unjudged()).isOne();
        assertThat(ledger.totalViolations()).isZero();

        txns.read(2, 5, "b");
        txns.evaluate(new long[] {2, 0, 6});
        assertThat(txns.unjudged()).isZero();
        assertThat(ledger.totalViolations()).isZero();
    }

    @Test
    void aCommittedTransactionReadInPartIsTornAndOneNeverReadIsLost() {
        TxnLedger.Txn torn = txn("torn", batch(0, 1, "a"), batch(1, 1, "b"));
        TxnLedger.Txn lost = txn("lost", batch(2, 1, "c"));
        txns.read(0, 1, "a");
        txns.outcome(torn, TxnLedger.Outcome.COMMITTED);
        txns.outcome(lost, TxnLedger.Outcome.COMMITTED);
        txns.evaluate(new long[] {2, 2, 2});

        assertThat(ledger.kinds(0)).isEqualTo("{TXN_LOST=1, TXN_TORN=1}");
    }

    @Test
    void anAbortedValueReadBeforeTheOutcomeIsAnUncommittedReadAndAfterItAnAbortedRead() {
        TxnLedger.Txn early = txn("early", batch(0, 1, "a"));
        txns.read(0, 1, "a");
        txns.outcome(early, TxnLedger.Outcome.ABORTED);
        TxnLedger.Txn late = txn("late", batch(1, 1, "b"));
        txns.outcome(late, TxnLedger.Outcome.ABORTED);
        txns.read(1, 1, "b");
        txns.evaluate(new long[] {2, 2, 0});

        assertThat(ledger.kinds(0)).isEqualTo("{TXN_ABORTED_READ=1, TXN_UNCOMMITTED_READ=1}");
    }

    @Test
    void anUnknownOutcomeMayBeAllOrNothingButNeverPart() {
        TxnLedger.Txn visible = txn("visible", batch(0, 1, "a"));
        TxnLedger.Txn absent = txn("absent", batch(1, 1, "b"));
        TxnLedger.Txn part = txn("part", batch(2, 1, "c", "d"));
        txns.read(0, 1, "a");
        txns.read(2, 2, "d");
        txns.outcome(visible, TxnLedger.Outcome.UNKNOWN);
        txns.outcome(absent, TxnLedger.Outcome.UNKNOWN);
        txns.outcome(part, TxnLedger.Outcome.UNKNOWN);
        txns.evaluate(new long[] {2, 2, 3});

        assertThat(ledger.kinds(0)).isEqualTo("{TXN_TORN=1}");
        assertThat(txns.unknownVisible.get()).isOne();
        assertThat(txns.unknownAbsent.get()).isOne();
    }

    @Test
    void aValueJudgedAbsentAndReadLaterIsALateRead() {
        TxnLedger.Txn t = txn("gone", batch(0, 1, "a"));
        txns.outcome(t, TxnLedger.Outcome.UNKNOWN);
        txns.evaluate(new long[] {5, 0, 0});
        assertThat(ledger.totalViolations()).isZero();

        txns.read(0, 1, "a");
        assertThat(ledger.kinds(0)).isEqualTo("{TXN_LATE_READ=1}");
    }

    @Test
    void duplicatesMovedValuesAndReadersThatDisagreeAreFoundAsTheyArrive() {
        txn("t", batch(0, 1, "a", "b"));
        txns.read(0, 1, "a");
        txns.read(0, 7, "a"); // twice
        txns.read(0, 3, "b"); // acknowledged at 2
        txns.rawAnswer(0, 10, 1, List.of(new ReplicaLog.Rec(1, "x"))); // raw reader disagrees at 1
        txns.read(0, 9, "nobody");

        assertThat(ledger.kinds(0))
                .isEqualTo("{TXN_DUPLICATE=1, TXN_MOVED=2, TXN_OFFSET_MISMATCH=1, TXN_UNKNOWN_VALUE=1}");
    }

    @Test
    void theLastStableOffsetMovingBackAndARecordAtItAreViolations() {
        txns.rawAnswer(1, 10, 1, List.of(new ReplicaLog.Rec(9, "a")));
        assertThat(ledger.totalViolations()).isZero();
        txns.rawAnswer(1, 8, 2, List.of());
        txns.rawAnswer(1, 12, 2, List.of(new ReplicaLog.Rec(12, "b")));

        assertThat(ledger.kinds(0)).isEqualTo("{ABOVE_LSO=1, LSO_DECREASED=1}");
        assertThat(txns.maxLsoSeen(1)).isEqualTo(12);
    }

    @Test
    void theReplicationLedgerCountsAValueReadAtTwoOffsetsAsADuplicate() {
        ledger.consumed(0, 0, "p0-1", 5, 1);
        ledger.consumed(0, 0, "p0-1", 5, 2); // the same offset again: a re-read, not a duplicate
        assertThat(ledger.totalViolations()).isZero();
        ledger.consumed(0, 3, "p0-1", 5, 1);

        assertThat(ledger.kinds(0)).isEqualTo("{DUPLICATE=1}");
    }

    @Test
    void aNonIdempotentProducersValueReadAtTwoOffsetsIsNoDuplicate() {
        ledger.atLeastOnce("p1-"); // an acks=1 producer: a retry may store a value twice
        ledger.consumed(0, 0, "p1-7", 5, 1);
        ledger.consumed(0, 1, "p1-7", 5, 1);
        assertThat(ledger.totalViolations()).isZero();
        ledger.consumed(0, 2, "p0-7", 5, 1);
        ledger.consumed(0, 3, "p0-7", 5, 1); // the idempotent producer's values are still checked

        assertThat(ledger.kinds(0)).isEqualTo("{DUPLICATE=1}");
    }

    @Test
    void aStuckLsoNamesTheTransactionsAboveItFirstThenTheLatestWithUnknownOffsets() {
        // u1 .. u4 have a write of unknown offset (begun in that order); below and elsewhere cannot hold it.
        TxnLedger.Txn u1 = txns.begin("u1");
        txns.sending(u1, 0, List.of("o"));
        TxnLedger.Txn u2 = txns.begin("u2");
        txns.sending(u2, 0, List.of("p"));
        txn("below", batch(0, 1, "b"));
        txn("above", batch(0, 10, "a"));
        txn("elsewhere", batch(1, 10, "e"));
        TxnLedger.Txn u3 = txns.begin("u3");
        txns.sending(u3, 0, List.of("n"));
        TxnLedger.Txn u4 = txns.begin("u4");
        txns.sending(u4, 0, List.of("m"));

        assertThat(txns.around(0, 5))
                .isEqualTo("; above OPEN p0@10[a]; u4 OPEN p0@-1[m]; u3 OPEN p0@-1[n]; u2 OPEN p0@-1[p]");
    }
}
