package io.stellflow.broker.replication;

import io.stellflow.client.TopicPartition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the fault checker's group workload ({@link GroupWorkload}) knows about the consumer group:
 * every record a member was handed by {@code poll} (first value per offset), the highest committed
 * offset read per partition, and counters for the run's summary. Violations go to the checker's
 * {@link Ledger}, so they are reported per round with the others:
 *
 * <ul>
 *   <li>{@code GROUP_WRONG_VALUE}: a member was handed a value at an offset that was acknowledged
 *       with another value (or two members read two values at one offset);
 *   <li>{@code COMMIT_BACKWARDS}: a committed offset read lower than one read before (nobody resets
 *       offsets in this workload, so a committed offset only grows);
 *   <li>{@code GROUP_ACKED_UNDELIVERED} ({@link #verifyDelivered}): an acknowledged record below the
 *       group's committed offset was never handed to any member (at-least-once broken).
 * </ul>
 *
 * <p>Thread-safety: thread-safe (member threads, the committed-offset poller and the test thread).
 */
final class GroupLedger {
    private final Ledger ledger;
    private final List<ConcurrentHashMap<Long, String>> delivered = new ArrayList<>();
    private final AtomicLongArray maxCommitted;

    final AtomicLong deliveries = new AtomicLong();
    /** Deliveries of an offset some member had been handed before (at-least-once redelivery). */
    final AtomicLong redeliveries = new AtomicLong();

    final AtomicLong commitsOk = new AtomicLong();
    /** Member commits refused with a fencing code (the member lost the partition meanwhile). */
    final AtomicLong commitsFenced = new AtomicLong();
    /** Member commits that ran out of time or met another error (coordinator down, ...). */
    final AtomicLong commitsFailed = new AtomicLong();
    /** Reads of the group's committed offsets that succeeded (each compared with the last). */
    final AtomicLong committedReads = new AtomicLong();
    /** Commits of an evicted member refused with a fencing code, as they must be. */
    final AtomicLong evictedCommitsRefused = new AtomicLong();
    /** Evicted members' commits that ended without a fencing code or acceptance (timeout, ...). */
    final AtomicLong evictedCommitsInconclusive = new AtomicLong();
    /** Acknowledged records checked as delivered to some member, over all checks. */
    final AtomicLong deliveryChecks = new AtomicLong();
    /** Steady states in which each partition was seen owned by exactly one member. */
    final AtomicLong steadyChecks = new AtomicLong();

    GroupLedger(Ledger ledger) {
        this.ledger = ledger;
        for (int p = 0; p < ledger.partitions(); p++) {
            delivered.add(new ConcurrentHashMap<>());
        }
        maxCommitted = new AtomicLongArray(ledger.partitions());
        for (int p = 0; p < ledger.partitions(); p++) {
            maxCommitted.set(p, -1);
        }
    }

    Ledger ledger() {
        return ledger;
    }

    /** A record {@code member} was handed by {@code poll}. */
    void delivered(int partition, long offset, String value, String member) {
        deliveries.incrementAndGet();
        String prev = delivered.get(partition).putIfAbsent(offset, value);
        if (prev != null) {
            redeliveries.incrementAndGet();
            if (!prev.equals(value)) {
                ledger.violation(
                        "GROUP_WRONG_VALUE",
                        partition,
                        "offset " + offset + " handed to a member as " + prev + ", later to " + member + " as "
                                + value);
            }
            return;
        }
        Ledger.Acked a = ledger.ackedOf(partition).get(offset);
        if (a != null && !a.value().equals(value)) {
            ledger.violation(
                    "GROUP_WRONG_VALUE",
                    partition,
                    member + " was handed " + value + " at offset " + offset + ", acknowledged as " + a.value()
                            + " (round " + a.round() + ")");
        }
    }

    /**
     * One read of the group's committed offsets (the next offset to read per partition); reads must
     * not overlap (an older answer ingested after a newer one would look like a move back).
     *
     * @return whether an offset went backwards
     */
    boolean committed(Map<TopicPartition, Long> offsets, String from) {
        committedReads.incrementAndGet();
        boolean backwards = false;
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            long offset = e.getValue();
            long prev = maxCommitted.getAndAccumulate(e.getKey().partition(), offset, Math::max);
            if (offset < prev) {
                backwards = true;
                ledger.violation(
                        "COMMIT_BACKWARDS",
                        e.getKey().partition(),
                        "committed offset read as " + prev + ", later as " + offset + " (" + from + ")");
            }
        }
        return backwards;
    }

    /** The highest committed offset read for {@code partition}, or -1. */
    long maxCommitted(int partition) {
        return maxCommitted.get(partition);
    }

    /**
     * Checks that every acknowledged record of {@code partition} below {@code committedTo} (a
     * committed offset of the group) was handed to some member with its acknowledged value. Every
     * acknowledged record from offset 0 is checked each time: acknowledgements of two producers may
     * arrive out of offset order, and the members start at the earliest offset.
     */
    void verifyDelivered(int partition, long committedTo) {
        ConcurrentHashMap<Long, String> seen = delivered.get(partition);
        for (Ledger.Acked a :
                ledger.ackedOf(partition).headMap(committedTo, false).values()) {
            deliveryChecks.incrementAndGet();
            String v = seen.get(a.offset());
            if (v == null) {
                ledger.violation(
                        "GROUP_ACKED_UNDELIVERED",
                        partition,
                        "acknowledged " + a.value() + " at offset " + a.offset() + " (round " + a.round()
                                + ") is below the group's committed offset " + committedTo
                                + " but no member was handed it");
            } else if (!v.equals(a.value())) {
                ledger.violation(
                        "GROUP_WRONG_VALUE",
                        partition,
                        "acknowledged " + a.value() + " at offset " + a.offset() + " but a member was handed " + v);
            }
        }
    }

    /** One line for the run's summary. */
    String summary() {
        return "deliveries=" + deliveries + " redeliveries=" + redeliveries + " commitsOk=" + commitsOk
                + " commitsFenced=" + commitsFenced + " commitsFailed=" + commitsFailed + " committedReads="
                + committedReads + " deliveryChecks=" + deliveryChecks + " steadyChecks=" + steadyChecks
                + " evictedCommitsRefused=" + evictedCommitsRefused + " evictedCommitsInconclusive="
                + evictedCommitsInconclusive;
    }
}
