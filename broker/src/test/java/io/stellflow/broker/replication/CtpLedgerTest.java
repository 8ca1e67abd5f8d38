package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The consume-transform-produce checker's judgements of the group offsets on hand-made histories:
 * each anomaly is found, a clean history passes, and a read waits for its transactions' judgement.
 */
class CtpLedgerTest {
    private final Ledger ledger = new Ledger(3);
    private final TxnLedger txns = new TxnLedger(ledger, 3);
    private final CtpLedger ctp = new CtpLedger(ledger, txns);
    private long nextOffset;

    /** Step {@code offset}: one value at {@code nextOffset} of partition 0, read when {@code read}. */
    private CtpLedger.Step step(long offset, TxnLedger.Outcome outcome, boolean read) {
        TxnLedger.Txn t = txns.begin("txn-checker-ctp#" + offset);
        CtpLedger.Step s = ctp.step(t, offset);
        String value = "tctp#" + offset + "-p0-0";
        long at = nextOffset++;
        txns.sending(t, 0, List.of(value)).baseOffset = at;
        if (read) {
            txns.read(0, at, value);
        }
        ctp.outcome(s, outcome);
        return s;
    }

    private void judgeAll() {
        txns.evaluate(new long[] {nextOffset, 0, 0});
        ctp.evaluate();
    }

    @Test
    void theLastCommittedOffsetWithItsValuesIsClean() {
        step(1, TxnLedger.Outcome.COMMITTED, true);
        step(2, TxnLedger.Outcome.ABORTED, false);
        step(3, TxnLedger.Outcome.COMMITTED, true);
        ctp.observed(0, 3, System.nanoTime());
        judgeAll();

        assertThat(ledger.totalViolations()).isZero();
        assertThat(ctp.unjudged()).isZero();
        assertThat(ctp.roundCounts(new long[4])).isEqualTo("ctp=2c/1a/0u/0r offset=3");
    }

    @Test
    void anAbortedTransactionsOffsetOrOneNobodyCommittedIsFound() {
        step(1, TxnLedger.Outcome.COMMITTED, true);
        step(2, TxnLedger.Outcome.ABORTED, false);
        ctp.observed(0, 2, System.nanoTime());
        ctp.observed(1, 7, System.nanoTime());
        judgeAll();

        assertThat(ledger.kinds(0)).isEqualTo("{CTP_ABORTED_OFFSET=1}");
        assertThat(ledger.kinds(1)).isEqualTo("{CTP_OFFSET_UNKNOWN=1}");
    }

    @Test
    void anOffsetOlderThanAKnownCommitIsLostAndNoOffsetAtAllToo() {
        step(1, TxnLedger.Outcome.COMMITTED, true);
        step(2, TxnLedger.Outcome.COMMITTED, true);
        ctp.observed(0, 1, System.nanoTime());
        judgeAll();
        assertThat(ledger.kinds(0)).isEqualTo("{CTP_OFFSET_LOST=1}");

        Ledger fresh = new Ledger(3);
        TxnLedger freshTxns = new TxnLedger(fresh, 3);
        CtpLedger freshCtp = new CtpLedger(fresh, freshTxns);
        TxnLedger.Txn t = freshTxns.begin("txn-checker-ctp#1");
        freshCtp.outcome(freshCtp.step(t, 1), TxnLedger.Outcome.COMMITTED);
        freshCtp.observed(0, -1, System.nanoTime());
        freshTxns.evaluate(new long[3]);
        freshCtp.evaluate();
        assertThat(fresh.kinds(0)).contains("CTP_OFFSET_LOST=1");
    }

    @Test
    void anUnknownOutcomeCountsAsCommittedOnlyOnceVisibleAndSettledByTheNextInit() {
        step(1, TxnLedger.Outcome.COMMITTED, true);
        step(2, TxnLedger.Outcome.UNKNOWN, true);
        // Before the next InitProducerId the unknown commit may still be completing: offset 1 is fine.
        ctp.observed(0, 1, System.nanoTime());
        judgeAll();
        assertThat(ledger.totalViolations()).isZero();

        ctp.initialized(System.nanoTime());
        ctp.observed(1, 1, System.nanoTime());
        judgeAll();
        assertThat(ledger.kinds(1)).isEqualTo("{CTP_OFFSET_LOST=1}");
    }

    @Test
    void aReadWaitsForTheTransactionWhoseOffsetItReadEvenOneBegunAfterItWasSent() {
        step(1, TxnLedger.Outcome.COMMITTED, true);
        txns.evaluate(new long[] {nextOffset, 0, 0}); // transaction 1 judged
        long sentNs = System.nanoTime(); // the read's call retries while transaction 2 runs whole
        step(2, TxnLedger.Outcome.COMMITTED, true);
        ctp.observed(0, 2, sentNs);
        ctp.evaluate(); // transaction 2 is not judged yet: the read waits for it
        assertThat(ctp.unjudged()).isEqualTo(1);
        assertThat(ledger.totalViolations()).isZero();
        judgeAll();
        assertThat(ledger.totalViolations()).isZero();
        assertThat(ctp.unjudged()).isZero();
    }

    @Test
    void anOffsetWhoseTransactionsValuesAreAbsentIsFound() {
        step(1, TxnLedger.Outcome.UNKNOWN, false); // judged absent: allowed for the values alone
        ctp.observed(0, 1, System.nanoTime());
        judgeAll();

        assertThat(ledger.kinds(0)).isEqualTo("{CTP_OFFSET_WITHOUT_VALUES=1}");
    }

    @Test
    void aReadOlderThanTheOneBeforeIsFoundAtOnce() {
        step(1, TxnLedger.Outcome.COMMITTED, true);
        step(2, TxnLedger.Outcome.COMMITTED, true);
        ctp.observed(0, 2, System.nanoTime());
        ctp.observed(1, 1, System.nanoTime());

        assertThat(ledger.kinds(1)).isEqualTo("{CTP_OFFSET_BACK=1}");
    }

    @Test
    void aReadWaitsUntilEveryTransactionBegunBeforeItIsJudged() {
        step(1, TxnLedger.Outcome.COMMITTED, true);
        TxnLedger.Txn open = txns.begin("txn-checker-ctp#2");
        CtpLedger.Step s = ctp.step(open, 2);
        txns.sending(open, 0, List.of("tctp#2-p0-0")).baseOffset = nextOffset++;
        ctp.observed(0, 2, System.nanoTime());
        judgeAll();
        assertThat(ctp.unjudged())
                .as("the transaction of offset 2 is still open")
                .isOne();

        ctp.outcome(s, TxnLedger.Outcome.ABORTED);
        judgeAll();
        assertThat(ctp.unjudged()).isZero();
        assertThat(ledger.kinds(0)).isEqualTo("{CTP_ABORTED_OFFSET=1}");
    }
}
