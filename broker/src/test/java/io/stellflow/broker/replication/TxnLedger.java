package io.stellflow.broker.replication;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the transactional workload checker knows ({@link TxnWorkload}): every transaction a client
 * ran (its values per partition, the offsets its Produce answers gave, its outcome), every value a
 * {@code read_committed} reader read (where and when), what the raw read_committed Fetches returned
 * at each offset, and the highest last stable offset seen per partition. Violations go to the
 * replication {@link Ledger}, so they count in the same rounds.
 *
 * <p>Checked as values arrive: a value read at two places ({@code TXN_DUPLICATE}); an offset read
 * with two values by any two readers ({@code TXN_OFFSET_MISMATCH}); a value read at another offset
 * than its Produce answer gave ({@code TXN_MOVED}); a Fetch answer's LSO below one seen before
 * ({@code LSO_DECREASED}) or a record returned at or above it ({@code ABOVE_LSO}); a value read that
 * no client wrote ({@code TXN_UNKNOWN_VALUE}); a value of a transaction already judged invisible
 * read later ({@code TXN_LATE_READ}).
 *
 * <p>Checked by {@link #evaluate} once a transaction is over and the reader has passed all of its
 * writes: committed (End answered NONE for commit) means every value read ({@code TXN_LOST} if none,
 * {@code TXN_TORN} if some); aborted (End answered NONE for abort, or no commit was ever sent) means
 * none read ({@code TXN_ABORTED_READ}, or {@code TXN_UNCOMMITTED_READ} when the read came before the
 * outcome was known); unknown (a commit sent whose answer was lost or an error) means all or none
 * ({@code TXN_TORN}).
 *
 * <p>Thread-safety: thread-safe (client threads, reader threads, the test thread).
 */
final class TxnLedger {
    enum Outcome {
        OPEN,
        COMMITTED,
        ABORTED,
        UNKNOWN
    }

    /** One batch of a transaction: its partition, values, and the base offset its Produce answer gave (-1: none). */
    static final class Batch {
        final int partition;
        final List<String> values;
        volatile long baseOffset = -1;

        Batch(int partition, List<String> values) {
            this.partition = partition;
            this.values = List.copyOf(values);
        }
    }

    /** One transaction of one client. */
    static final class Txn {
        final String name;
        final int round;
        final List<Batch> batches = new CopyOnWriteArrayList<>();
        volatile Outcome outcome = Outcome.OPEN;
        /** When the outcome became known to the client (System.nanoTime), or 0. */
        volatile long outcomeNs;

        volatile boolean judged;
        /** Set when judged: whether every value was read (a transaction with no value is never visible). */
        volatile boolean visible;

        Txn(String name, int round) {
            this.name = name;
            this.round = round;
        }
    }

    /** Where and when a reader read a value. */
    record Read(int partition, long offset, long atNs) {}

    private final Ledger ledger;
    private final int partitions;
    private final List<Txn> txns = new CopyOnWriteArrayList<>();
    private final Map<String, Txn> txnOf = new ConcurrentHashMap<>();
    private final Map<String, Batch> batchOf = new ConcurrentHashMap<>();
    private final Map<String, Read> reads = new ConcurrentHashMap<>();
    private final List<ConcurrentHashMap<Long, String>> atOffset = new ArrayList<>();
    private final AtomicLongArray maxLso;
    private int judgedUpTo;

    final AtomicLong committed = new AtomicLong();
    final AtomicLong aborted = new AtomicLong();
    final AtomicLong unknown = new AtomicLong();
    /** Unknown outcomes found visible / absent when judged. */
    final AtomicLong unknownVisible = new AtomicLong();

    final AtomicLong unknownAbsent = new AtomicLong();
    final AtomicLong valuesRead = new AtomicLong();
    final AtomicLong rawRecords = new AtomicLong();

    TxnLedger(Ledger ledger, int partitions) {
        this.ledger = ledger;
        this.partitions = partitions;
        for (int p = 0; p < partitions; p++) {
            atOffset.add(new ConcurrentHashMap<>());
        }
        maxLso = new AtomicLongArray(partitions);
        for (int p = 0; p < partitions; p++) {
            maxLso.set(p, -1);
        }
    }

    /** A client starts transaction {@code name}. */
    Txn begin(String name) {
        Txn t = new Txn(name, ledger.round());
        txns.add(t);
        return t;
    }

    /** A batch about to be sent: its values are known before any reader can see them. */
    Batch sending(Txn t, int partition, List<String> values) {
        Batch b = new Batch(partition, values);
        for (String v : values) {
            txnOf.put(v, t);
            batchOf.put(v, b);
        }
        t.batches.add(b);
        return b;
    }

    /** The client knows (or gave up knowing) how {@code t} ended. */
    void outcome(Txn t, Outcome outcome) {
        t.outcomeNs = System.nanoTime();
        t.outcome = outcome;
        switch (outcome) {
            case COMMITTED -> committed.incrementAndGet();
            case ABORTED -> aborted.incrementAndGet();
            case UNKNOWN -> unknown.incrementAndGet();
            case OPEN -> throw new IllegalArgumentException("OPEN is not an outcome");
        }
    }

    /** A value the read_committed consumer handed out. */
    void read(int partition, long offset, String value) {
        long now = System.nanoTime();
        valuesRead.incrementAndGet();
        sameAtOffset(partition, offset, value, "the consumer");
        Txn t = txnOf.get(value);
        if (t == null) {
            ledger.violation("TXN_UNKNOWN_VALUE", partition, "read " + value + " at " + offset + ", never written");
            return;
        }
        Read prev = reads.putIfAbsent(value, new Read(partition, offset, now));
        if (prev != null && (prev.partition() != partition || prev.offset() != offset)) {
            ledger.violation(
                    "TXN_DUPLICATE",
                    partition,
                    value + " (" + t.name + ") read at p" + prev.partition() + "@" + prev.offset() + " and p"
                            + partition + "@" + offset);
        }
        Batch b = batchOf.get(value);
        long base = b.baseOffset;
        if (base >= 0 && (b.partition != partition || base + b.values.indexOf(value) != offset)) {
            ledger.violation(
                    "TXN_MOVED",
                    partition,
                    value + " (" + t.name + ") acknowledged at p" + b.partition + "@" + (base + b.values.indexOf(value))
                            + ", read at p" + partition + "@" + offset);
        }
        if (t.judged && prev == null) {
            ledger.violation(
                    "TXN_LATE_READ",
                    partition,
                    value + " of " + t.name + " (" + t.outcome + ") read at " + offset
                            + " after the reader had passed it without it");
        }
    }

    /**
     * A raw Fetch (isolation 1) answer: its LSO and each record returned (aborted ones included: the
     * broker lists them, the consumer filters them).
     */
    void rawAnswer(int partition, long lso, int brokerId, List<ReplicaLog.Rec> records) {
        long prev = maxLso.getAndAccumulate(partition, lso, Math::max);
        if (lso < prev) {
            ledger.violation(
                    "LSO_DECREASED",
                    partition,
                    "a read_committed Fetch saw LSO " + prev + ", then " + lso + " from broker " + brokerId);
        }
        for (ReplicaLog.Rec r : records) {
            rawRecords.incrementAndGet();
            if (r.offset() >= lso) {
                ledger.violation(
                        "ABOVE_LSO",
                        partition,
                        "broker " + brokerId + " returned " + r.value() + " at " + r.offset()
                                + " to isolation 1 with LSO " + lso);
            }
            sameAtOffset(partition, r.offset(), r.value(), "a raw Fetch from broker " + brokerId);
        }
    }

    /** A violation found by the transactional load itself (a client crashed). */
    void violation(String kind, int partition, String detail) {
        ledger.violation(kind, partition, detail);
    }

    long maxLsoSeen(int partition) {
        return maxLso.get(partition);
    }

    private void sameAtOffset(int partition, long offset, String value, String who) {
        String prev = atOffset.get(partition).putIfAbsent(offset, value);
        if (prev != null && !prev.equals(value)) {
            ledger.violation(
                    "TXN_OFFSET_MISMATCH",
                    partition,
                    "offset " + offset + " read as " + prev + ", then as " + value + " by " + who);
        }
    }

    /**
     * The offset every finished transaction's acknowledged writes lie below, per partition: once
     * the reader is there, {@link #evaluate} can judge them all.
     */
    long[] finishedWritesEnd() {
        long[] end = new long[partitions];
        for (Txn t : txns) {
            if (t.outcome == Outcome.OPEN) {
                continue;
            }
            for (Batch b : t.batches) {
                if (b.baseOffset >= 0) {
                    end[b.partition] = Math.max(end[b.partition], b.baseOffset + b.values.size());
                }
            }
        }
        return end;
    }

    /**
     * Judges every finished transaction whose acknowledged writes lie below {@code readTo} (what
     * the read_committed consumer has read through, per partition); see the class comment.
     */
    synchronized void evaluate(long[] readTo) {
        List<Txn> snapshot = txns;
        for (int i = judgedUpTo; i < snapshot.size(); i++) {
            Txn t = snapshot.get(i);
            if (t.judged || t.outcome == Outcome.OPEN || !passed(t, readTo)) {
                continue;
            }
            judge(t);
        }
        while (judgedUpTo < snapshot.size() && snapshot.get(judgedUpTo).judged) {
            judgedUpTo++;
        }
    }

    private static boolean passed(Txn t, long[] readTo) {
        for (Batch b : t.batches) {
            if (b.baseOffset >= 0 && readTo[b.partition] < b.baseOffset + b.values.size()) {
                return false;
            }
        }
        return true;
    }

    private void judge(Txn t) {
        int total = 0;
        int seen = 0;
        Read firstRead = null;
        int somePartition = -1;
        for (Batch b : t.batches) {
            somePartition = b.partition;
            for (String v : b.values) {
                total++;
                Read r = reads.get(v);
                if (r != null) {
                    seen++;
                    if (firstRead == null || r.atNs() < firstRead.atNs()) {
                        firstRead = r;
                    }
                }
            }
        }
        String what = t.name + " (round " + t.round + ", " + t.outcome + ") " + describe(t);
        switch (t.outcome) {
            case COMMITTED -> {
                if (seen == 0) {
                    ledger.violation(t.round, "TXN_LOST", somePartition, "none of " + total + " values read: " + what);
                } else if (seen < total) {
                    ledger.violation(
                            t.round, "TXN_TORN", somePartition, seen + " of " + total + " values read: " + what);
                }
            }
            case ABORTED -> {
                if (seen > 0) {
                    boolean early = firstRead.atNs() < t.outcomeNs;
                    ledger.violation(
                            t.round,
                            early ? "TXN_UNCOMMITTED_READ" : "TXN_ABORTED_READ",
                            firstRead.partition(),
                            seen + " of " + total + " values read (first at p" + firstRead.partition() + "@"
                                    + firstRead.offset() + "): " + what);
                }
            }
            case UNKNOWN -> {
                if (seen > 0 && seen < total) {
                    ledger.violation(
                            t.round, "TXN_TORN", somePartition, seen + " of " + total + " values read: " + what);
                } else if (seen == total) {
                    unknownVisible.incrementAndGet();
                } else {
                    unknownAbsent.incrementAndGet();
                }
            }
            case OPEN -> throw new IllegalStateException(t.name + " is open");
        }
        t.visible = total > 0 && seen == total;
        t.judged = true;
    }

    private static String describe(Txn t) {
        StringBuilder sb = new StringBuilder();
        for (Batch b : t.batches) {
            sb.append(" p").append(b.partition).append('@').append(b.baseOffset).append(b.values);
        }
        return sb.toString();
    }

    /**
     * Up to 4 transactions that may hold {@code partition}'s LSO at {@code from}: first those with an
     * acknowledged write at or above it (oldest first), then those with a write whose offset is
     * unknown (newest first: the oldest such ones are long closed), each with its name, outcome and
     * batches, so a stuck LSO names its suspects.
     */
    String around(int partition, long from) {
        List<Txn> known = new ArrayList<>();
        List<Txn> unknownOffset = new ArrayList<>();
        for (Txn t : txns) {
            boolean above = false;
            boolean unacknowledged = false;
            for (Batch b : t.batches) {
                if (b.partition == partition) {
                    above |= b.baseOffset >= 0 && b.baseOffset + b.values.size() > from;
                    unacknowledged |= b.baseOffset < 0;
                }
            }
            if (above) {
                known.add(t);
            } else if (unacknowledged) {
                unknownOffset.add(t);
            }
        }
        List<Txn> suspects = new ArrayList<>(known.subList(0, Math.min(4, known.size())));
        for (int i = unknownOffset.size() - 1; i >= 0 && suspects.size() < 4; i--) {
            suspects.add(unknownOffset.get(i));
        }
        StringBuilder sb = new StringBuilder();
        for (Txn t : suspects) {
            sb.append("; ").append(t.name).append(' ').append(t.outcome).append(describe(t));
        }
        return sb.toString();
    }

    /** Finished transactions not judged yet (their writes not passed by the reader). */
    long unjudged() {
        long n = 0;
        for (Txn t : txns) {
            if (!t.judged && t.outcome != Outcome.OPEN) {
                n++;
            }
        }
        return n;
    }

    /** Committed, aborted, unknown transactions and values read so far (for a round's deltas). */
    long[] snapshot() {
        return new long[] {committed.get(), aborted.get(), unknown.get(), valuesRead.get()};
    }

    /** A round's transactional counts for its FAULT_ROUND line: what happened since {@code before}. */
    String roundCounts(long[] before) {
        long[] now = snapshot();
        return "txn=" + (now[0] - before[0]) + "c/" + (now[1] - before[1]) + "a/" + (now[2] - before[2]) + "u read="
                + (now[3] - before[3]);
    }

    /** {@code committed/aborted/unknown(visible+absent) read=N}: the totals for the FAULT_CHECKER line. */
    String counts() {
        return "txn committed=" + committed.get() + " aborted=" + aborted.get() + " unknown=" + unknown.get() + "("
                + unknownVisible.get() + " visible, " + unknownAbsent.get() + " absent) read=" + valuesRead.get()
                + " rawRead=" + rawRecords.get() + " committedPerClient=" + committedPerClient();
    }

    /** Committed transactions per client (the name before {@code #}), e.g. {@code {txn-checker-0=12, ...}}. */
    Map<String, Long> committedPerClient() {
        Map<String, Long> perClient = new java.util.TreeMap<>();
        for (Txn t : txns) {
            if (t.outcome == Outcome.COMMITTED) {
                perClient.merge(t.name.substring(0, t.name.indexOf('#')), 1L, Long::sum);
            }
        }
        return perClient;
    }
}
