package io.stellflow.broker.replication;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the checker knows of the consume-transform-produce client ({@link CtpClient}): each of its
 * transactions commits group {@value #GROUP}'s offset of one partition to a number of its own (its
 * step: 1, 2, 3 ... in the order the client runs them), so the group's committed offset names the
 * transaction whose offsets it is. The transactions' values, outcomes and reads are in the {@link
 * TxnLedger}; here: the group offsets read after each round ({@link #observed}), judged once every
 * transaction begun before the read was judged there ({@link #evaluate}). Violations go to the
 * replication {@link Ledger}, in the round of the read.
 *
 * <ul>
 *   <li>{@code CTP_OFFSET_UNKNOWN}: an offset no transaction committed;
 *   <li>{@code CTP_ABORTED_OFFSET}: the offset of an aborted transaction (abort answered, or no
 *       commit ever sent);
 *   <li>{@code CTP_OFFSET_WITHOUT_VALUES}: the offset of a transaction whose values the {@code
 *       read_committed} reader did not find (offsets and records must commit together);
 *   <li>{@code CTP_OFFSET_LOST}: an offset older than that of a transaction known committed before
 *       the read was sent: its commit was answered, or (outcome unknown) its values are visible and
 *       the client's next InitProducerId, which completes a prepared commit first, had returned;
 *   <li>{@code CTP_OFFSET_BACK}: a read older than the one before (checked as it comes).
 * </ul>
 *
 * <p>Thread-safety: thread-safe (the client's thread, the test thread).
 */
final class CtpLedger {
    static final String GROUP = "txn-ctp";

    /** One transaction of the client and the offset it commits. */
    static final class Step {
        final long offset;
        final TxnLedger.Txn txn;
        final long beganNs;
        /**
         * When a commit of this transaction, if there was one, was complete everywhere (0: not
         * known yet): the answered commit's outcome time, or for an unknown outcome the return of
         * the client's next InitProducerId.
         */
        volatile long settledNs;

        Step(long offset, TxnLedger.Txn txn, long beganNs) {
            this.offset = offset;
            this.txn = txn;
            this.beganNs = beganNs;
        }
    }

    /** A read of the group's offset: its round, the offset (-1: none), when it was sent. */
    record Observation(int round, long offset, long sentNs) {}

    private final Ledger ledger;
    private final TxnLedger txns;
    private final List<Step> steps = new CopyOnWriteArrayList<>();
    private final Map<Long, Step> byOffset = new ConcurrentHashMap<>();
    private final List<Observation> pending = new ArrayList<>();
    private long lastRead = -1;

    final AtomicLong committed = new AtomicLong();
    final AtomicLong aborted = new AtomicLong();
    final AtomicLong unknown = new AtomicLong();
    /** Producers closed and created again (fenced, fatal, unknown commit, a failed abort). */
    final AtomicLong recreated = new AtomicLong();
    /** Commits that threw and, sent again, were answered. */
    final AtomicLong commitsRetried = new AtomicLong();

    final AtomicLong reads = new AtomicLong();
    final AtomicLong judgedReads = new AtomicLong();

    CtpLedger(Ledger ledger, TxnLedger txns) {
        this.ledger = ledger;
        this.txns = txns;
    }

    /** The client began transaction {@code t}, which will commit offset {@code offset}. */
    Step step(TxnLedger.Txn t, long offset) {
        Step s = new Step(offset, t, System.nanoTime());
        steps.add(s);
        byOffset.put(offset, s);
        return s;
    }

    /** The client knows (or gave up knowing) how the step ended; recorded in the {@link TxnLedger} too. */
    void outcome(Step s, TxnLedger.Outcome outcome) {
        txns.outcome(s.txn, outcome);
        switch (outcome) {
            case COMMITTED -> {
                s.settledNs = s.txn.outcomeNs;
                committed.incrementAndGet();
            }
            case ABORTED -> aborted.incrementAndGet();
            case UNKNOWN -> unknown.incrementAndGet();
            case OPEN -> throw new IllegalArgumentException("OPEN is not an outcome");
        }
    }

    /**
     * The client's InitProducerId returned at {@code nowNs}: the coordinator completed any prepared
     * commit of the id first, so every unknown outcome before it is settled.
     */
    void initialized(long nowNs) {
        for (Step s : steps) {
            if (s.txn.outcome == TxnLedger.Outcome.UNKNOWN && s.settledNs == 0 && s.txn.outcomeNs < nowNs) {
                s.settledNs = nowNs;
            }
        }
    }

    /** A read of the group's committed offset ({@code -1}: none) sent at {@code sentNs} in {@code round}. */
    synchronized void observed(int round, long offset, long sentNs) {
        reads.incrementAndGet();
        if (offset < lastRead) {
            ledger.violation(
                    round,
                    "CTP_OFFSET_BACK",
                    -1,
                    "group " + GROUP + " read at offset " + lastRead + " (" + name(lastRead) + "), then at " + offset
                            + " (" + name(offset) + ")");
        }
        lastRead = Math.max(lastRead, offset);
        pending.add(new Observation(round, offset, sentNs));
    }

    /** The offset last read, -1 when none yet. */
    synchronized long lastRead() {
        return lastRead;
    }

    /**
     * Judges every read whose transactions (those begun before it was sent, and the one whose offset
     * it read) are all judged.
     */
    synchronized void evaluate() {
        for (Iterator<Observation> it = pending.iterator(); it.hasNext(); ) {
            Observation o = it.next();
            if (ready(o)) {
                judge(o);
                judgedReads.incrementAndGet();
                it.remove();
            }
        }
    }

    /** Reads not judged yet (a transaction before them not judged in the {@link TxnLedger}). */
    synchronized int unjudged() {
        return pending.size();
    }

    private boolean ready(Observation o) {
        // The transaction whose offset was read must be judged too, even when it began after the
        // read was sent: the read's call retries (a broker down), so it may span a whole transaction.
        Step at = o.offset() < 0 ? null : byOffset.get(o.offset());
        if (at != null && !at.txn.judged) {
            return false;
        }
        for (Step s : steps) {
            if (s.beganNs < o.sentNs() && !s.txn.judged) {
                return false;
            }
        }
        return true;
    }

    private void judge(Observation o) {
        Step at = o.offset() < 0 ? null : byOffset.get(o.offset());
        if (o.offset() >= 0 && at == null) {
            ledger.violation(
                    o.round(),
                    "CTP_OFFSET_UNKNOWN",
                    -1,
                    "group " + GROUP + " at offset " + o.offset() + ", which no transaction committed");
            return;
        }
        if (at != null) {
            if (at.txn.outcome == TxnLedger.Outcome.ABORTED) {
                ledger.violation(
                        o.round(),
                        "CTP_ABORTED_OFFSET",
                        -1,
                        "group " + GROUP + " at offset " + o.offset() + " of aborted " + at.txn.name);
            } else if (!at.txn.visible) {
                ledger.violation(
                        o.round(),
                        "CTP_OFFSET_WITHOUT_VALUES",
                        -1,
                        "group " + GROUP + " at offset " + o.offset() + " of " + at.txn.name + " (" + at.txn.outcome
                                + "), whose values the read_committed reader did not find");
            }
        }
        Step latest = null;
        for (Step s : steps) {
            boolean known = s.settledNs != 0
                    && s.settledNs < o.sentNs()
                    && (s.txn.outcome == TxnLedger.Outcome.COMMITTED
                            || (s.txn.outcome == TxnLedger.Outcome.UNKNOWN && s.txn.visible));
            if (known && (latest == null || s.offset > latest.offset)) {
                latest = s;
            }
        }
        if (latest != null && latest.offset > o.offset()) {
            ledger.violation(
                    o.round(),
                    "CTP_OFFSET_LOST",
                    -1,
                    "group " + GROUP + " at " + (o.offset() < 0 ? "no offset" : "offset " + o.offset()) + " ("
                            + name(o.offset()) + ") "
                            + ((o.sentNs() - latest.settledNs) / 1_000_000) + " ms after " + latest.txn.name + " ("
                            + latest.txn.outcome + ", offset " + latest.offset + ") was known committed");
        }
    }

    private String name(long offset) {
        Step s = offset < 0 ? null : byOffset.get(offset);
        return s == null ? "none" : s.txn.name + " " + s.txn.outcome;
    }

    /** Committed, aborted, unknown transactions, producers created again (for a round's deltas). */
    long[] snapshot() {
        return new long[] {committed.get(), aborted.get(), unknown.get(), recreated.get()};
    }

    /** A round's counts for its FAULT_ROUND line: {@code ctp=<c>c/<a>a/<u>u/<r>r offset=<last read>}. */
    String roundCounts(long[] before) {
        long[] now = snapshot();
        return "ctp=" + (now[0] - before[0]) + "c/" + (now[1] - before[1]) + "a/" + (now[2] - before[2]) + "u/"
                + (now[3] - before[3]) + "r offset=" + lastRead();
    }

    /** The totals for the FAULT_CHECKER line. */
    String counts() {
        return "ctp committed=" + committed.get() + " aborted=" + aborted.get() + " unknown=" + unknown.get()
                + " commitsRetried=" + commitsRetried.get() + " producersRecreated=" + recreated.get()
                + " offsetReads=" + reads.get() + " judged=" + judgedReads.get() + " lastOffset=" + lastRead();
    }
}
