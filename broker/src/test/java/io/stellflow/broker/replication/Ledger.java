package io.stellflow.broker.replication;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the workload checker knows about one topic: every acknowledged record (partition, offset,
 * value, the round it was acknowledged in), every record a consumer read (first value seen per
 * offset), the highest high watermark a consumer saw per partition, and the violations found. The
 * checks that can run as data arrives run here:
 *
 * <ul>
 *   <li>two acknowledgements naming one offset with different values ({@code ACK_CONFLICT});
 *   <li>a Fetch answer whose high watermark is below one seen before ({@code HW_DECREASED});
 *   <li>a record returned at or above the answer's high watermark ({@code ABOVE_HW});
 *   <li>an offset read twice with different values ({@code OFFSET_REWRITTEN});
 *   <li>a value read at two offsets ({@code DUPLICATE}): idempotent producers (issue #20) store no
 *       value twice, not even one whose send failed (it may be stored once or not at all); values of
 *       a non-idempotent producer (registered with {@link #atLeastOnce}) may be stored twice;
 *   <li>a gap or reordering in what a consumer read ({@code GAP}, reported by the consumer).
 * </ul>
 *
 * {@link #verifyAcked} compares the acknowledged records with what consumers read ({@code
 * ACKED_LOST}: the offset was read with another value; {@code ACKED_UNREADABLE}: never readable).
 *
 * <p>Violations are counted per (round, kind, partition); the first detail of each is kept.
 *
 * <p>Thread-safety: thread-safe (producer callbacks, consumer threads and the test thread).
 */
final class Ledger {
    /** One acknowledged record. */
    record Acked(long offset, String value, int round) {}

    private final int partitions;
    private final List<ConcurrentSkipListMap<Long, Acked>> acked = new ArrayList<>();
    private final List<ConcurrentHashMap<Long, String>> consumed = new ArrayList<>();
    /** Where each value was first read: partition and offset. */
    private final ConcurrentHashMap<String, long[]> readAt = new ConcurrentHashMap<>();

    private final AtomicLongArray maxHwSeen;
    private final long[] verifiedTo;
    private final Map<String, Long> violationCounts = new LinkedHashMap<>();
    private final Map<String, String> violationDetails = new LinkedHashMap<>();
    private final Map<Integer, Long> violationsPerRound = new TreeMap<>();
    final AtomicLong ackedCount = new AtomicLong();
    final AtomicLong failedSends = new AtomicLong();
    /** Acknowledgements with acks 0 or 1: such records may be lost, they are not checked. */
    final AtomicLong weakAcks = new AtomicLong();

    final AtomicLong consumedCount = new AtomicLong();
    private volatile int round;

    /** Value prefixes of non-idempotent producers: at-least-once, so exempt from {@code DUPLICATE}. */
    private final List<String> atLeastOncePrefixes = new CopyOnWriteArrayList<>();

    Ledger(int partitions) {
        this.partitions = partitions;
        for (int p = 0; p < partitions; p++) {
            acked.add(new ConcurrentSkipListMap<>());
            consumed.add(new ConcurrentHashMap<>());
        }
        maxHwSeen = new AtomicLongArray(partitions);
        for (int p = 0; p < partitions; p++) {
            maxHwSeen.set(p, -1);
        }
        verifiedTo = new long[partitions];
    }

    int partitions() {
        return partitions;
    }

    void round(int round) {
        this.round = round;
    }

    int round() {
        return round;
    }

    /** A producer's acknowledgement of {@code value} at {@code offset}. */
    void acked(int partition, long offset, String value) {
        ackedCount.incrementAndGet();
        Acked prev = acked.get(partition).putIfAbsent(offset, new Acked(offset, value, round));
        if (prev != null && !prev.value().equals(value)) {
            violation(
                    "ACK_CONFLICT",
                    partition,
                    "offset " + offset + " acknowledged for " + prev.value() + " (round " + prev.round() + ") and "
                            + value);
        }
    }

    /** A Fetch answer's high watermark from broker {@code brokerId}. */
    void highWatermark(int partition, long hw, int brokerId) {
        long prev = maxHwSeen.getAndAccumulate(partition, hw, Math::max);
        if (hw < prev) {
            violation(
                    "HW_DECREASED",
                    partition,
                    "a consumer saw HW " + prev + ", then " + hw + " from broker " + brokerId);
        }
    }

    long maxHwSeen(int partition) {
        return maxHwSeen.get(partition);
    }

    /** A record a consumer read from broker {@code brokerId} in an answer with high watermark {@code hw}. */
    void consumed(int partition, long offset, String value, long hw, int brokerId) {
        consumedCount.incrementAndGet();
        if (offset >= hw) {
            violation(
                    "ABOVE_HW",
                    partition,
                    "broker " + brokerId + " returned offset " + offset + " (" + value + ") to a consumer with HW "
                            + hw);
        }
        String prev = consumed.get(partition).putIfAbsent(offset, value);
        if (prev != null && !prev.equals(value)) {
            violation(
                    "OFFSET_REWRITTEN",
                    partition,
                    "offset " + offset + " was read as " + prev + ", later as " + value + " from broker " + brokerId);
        }
        long[] first = readAt.putIfAbsent(value, new long[] {partition, offset});
        if (first != null && (first[0] != partition || first[1] != offset) && !mayRepeat(value)) {
            violation(
                    "DUPLICATE",
                    partition,
                    value + " read at p" + first[0] + "@" + first[1] + " and again at p" + partition + "@" + offset
                            + " from broker " + brokerId);
        }
    }

    /**
     * Values starting with {@code valuePrefix} come from a producer that is not idempotent ({@code
     * acks=1}, or {@code enable.idempotence=false}): a retry may store one twice, which is no violation.
     */
    void atLeastOnce(String valuePrefix) {
        atLeastOncePrefixes.add(valuePrefix);
    }

    private boolean mayRepeat(String value) {
        for (String prefix : atLeastOncePrefixes) {
            if (value.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** The highest acknowledged offset of {@code partition}, or -1. */
    long maxAckedOffset(int partition) {
        Map.Entry<Long, Acked> last = acked.get(partition).lastEntry();
        return last == null ? -1 : last.getKey();
    }

    NavigableMap<Long, Acked> ackedOf(int partition) {
        return acked.get(partition);
    }

    String consumedValue(int partition, long offset) {
        return consumed.get(partition).get(offset);
    }

    /**
     * Checks every acknowledged record of {@code partition} below {@code readUpTo} (what consumers
     * have read through) that was not checked before: a consumer must have read exactly its value at
     * its offset.
     */
    synchronized void verifyAcked(int partition, long readUpTo) {
        for (Acked a : acked.get(partition)
                .subMap(verifiedTo[partition], true, readUpTo, false)
                .values()) {
            String seen = consumed.get(partition).get(a.offset());
            if (seen == null) {
                violation(
                        "ACKED_UNREAD",
                        partition,
                        "acknowledged " + a.value() + " at offset " + a.offset() + " (round " + a.round()
                                + ") was skipped by the consumer");
            } else if (!seen.equals(a.value())) {
                violation(
                        "ACKED_LOST",
                        partition,
                        "acknowledged " + a.value() + " at offset " + a.offset() + " (round " + a.round()
                                + ") but the offset holds " + seen);
            }
        }
        verifiedTo[partition] = Math.max(verifiedTo[partition], readUpTo);
    }

    /** Records a violation in the current round. */
    void violation(String kind, int partition, String detail) {
        violation(round, kind, partition, detail);
    }

    synchronized void violation(int inRound, String kind, int partition, String detail) {
        String key = "round " + inRound + " " + kind + " p" + partition;
        violationCounts.merge(key, 1L, Long::sum);
        violationDetails.putIfAbsent(key, detail);
        violationsPerRound.merge(inRound, 1L, Long::sum);
    }

    synchronized long violations(int inRound) {
        return violationsPerRound.getOrDefault(inRound, 0L);
    }

    synchronized long totalViolations() {
        long n = 0;
        for (long c : violationsPerRound.values()) {
            n += c;
        }
        return n;
    }

    synchronized List<Integer> failingRounds() {
        return new ArrayList<>(violationsPerRound.keySet());
    }

    /** One line per (round, kind, partition): count and first detail. */
    synchronized String report() {
        StringBuilder sb = new StringBuilder();
        violationCounts.forEach((k, n) -> sb.append("  ")
                .append(k)
                .append(" x")
                .append(n)
                .append(": ")
                .append(violationDetails.get(k))
                .append('\n'));
        return sb.toString();
    }

    /** Violation kinds (with counts) of one round, for the round's summary line. */
    synchronized String kinds(int inRound) {
        Map<String, Long> byKind = new TreeMap<>();
        String prefix = "round " + inRound + " ";
        violationCounts.forEach((k, n) -> {
            if (k.startsWith(prefix)) {
                String kind = k.substring(prefix.length(), k.lastIndexOf(' '));
                byKind.merge(kind, n, Long::sum);
            }
        });
        return byKind.toString();
    }
}
