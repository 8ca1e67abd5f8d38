package io.stellflow.tools;

import io.stellflow.client.TopicPartition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Computes the new committed offset of each partition for {@code stellflow-consumer-groups.sh
 * --reset-offsets}, as Kafka's tool does: {@code --to-earliest} the log start, {@code --to-latest} the
 * log end (high watermark), {@code --to-datetime} / {@code --by-duration} the first offset whose
 * timestamp is at or after the time (the log end when no record is), {@code --to-offset} the given
 * offset and {@code --shift-by} the committed offset plus the shift, both clamped into [log start, log
 * end] (a shift below 0 included); the plan's note then names the offset asked for, the bound and the
 * offset used, and the command prints it as a NOTE line per partition. Nothing is changed here; the command prints the plan and applies it only
 * with {@code --execute}.
 *
 * <p>Errors: a {@code --shift-by} of a partition without a committed offset throws {@link
 * IllegalArgumentException} naming it (there is nothing to shift from); lookups throw what the {@link
 * GroupAdmin} throws. Thread-safety: stateless.
 */
final class OffsetResetPlanner {
    private OffsetResetPlanner() {}

    /** Where {@code --reset-offsets} moves each partition. */
    sealed interface Target {
        /** {@code --to-earliest}. */
        record ToEarliest() implements Target {}

        /** {@code --to-latest}. */
        record ToLatest() implements Target {}

        /** {@code --to-offset N}, N >= 0. */
        record ToOffset(long offset) implements Target {}

        /** {@code --to-datetime} or {@code --by-duration}, resolved to epoch ms. */
        record ToTime(long timestampMs) implements Target {}

        /** {@code --shift-by N} (negative: back). */
        record ShiftBy(long delta) implements Target {}
    }

    /**
     * One partition's plan.
     *
     * @param currentOffset the committed offset now, or -1 when the group has none
     * @param newOffset the offset to commit
     * @param note why the offset is not the one asked for ("" when it is)
     */
    record PlannedReset(TopicPartition partition, long currentOffset, long newOffset, String note) {}

    /**
     * The plan for {@code partitions} (in their order).
     *
     * @param committed the group's committed offsets (partitions absent have none)
     */
    static List<PlannedReset> plan(
            GroupAdmin admin, Map<TopicPartition, Long> committed, List<TopicPartition> partitions, Target target) {
        List<PlannedReset> out = new ArrayList<>(partitions.size());
        for (TopicPartition tp : partitions) {
            long current = committed.getOrDefault(tp, -1L);
            out.add(
                    switch (target) {
                        case Target.ToEarliest e -> new PlannedReset(tp, current, admin.earliestOffset(tp), "");
                        case Target.ToLatest l -> new PlannedReset(tp, current, admin.latestOffset(tp), "");
                        case Target.ToTime t -> {
                            long at = admin.offsetForTime(tp, t.timestampMs());
                            yield at >= 0
                                    ? new PlannedReset(tp, current, at, "")
                                    : new PlannedReset(
                                            tp,
                                            current,
                                            admin.latestOffset(tp),
                                            "no record at or after the time: log end");
                        }
                        case Target.ToOffset o -> clamped(admin, tp, current, o.offset(), "");
                        case Target.ShiftBy s -> {
                            if (current < 0) {
                                throw new IllegalArgumentException("--shift-by: group has no committed offset for " + tp
                                        + " to shift from; use --to-offset, --to-earliest or --to-latest for it");
                            }
                            // current >= 0, so current + a negative delta cannot overflow; it may go
                            // below 0, which the clamp reports like any offset below the log start
                            long wanted = s.delta() >= 0 && current > Long.MAX_VALUE - s.delta()
                                    ? Long.MAX_VALUE
                                    : current + s.delta();
                            yield clamped(
                                    admin,
                                    tp,
                                    current,
                                    wanted,
                                    current
                                            + (s.delta() < 0
                                                    ? " - " + Long.toUnsignedString(-s.delta())
                                                    : " + " + s.delta())
                                            + " = ");
                        }
                    });
        }
        return out;
    }

    /**
     * {@code wanted} moved into [log start, log end], with a note when it had to move that names the
     * offset asked for ({@code how} says how it was computed, e.g. "3 - 5 = "), the bound and the
     * offset used.
     */
    private static PlannedReset clamped(GroupAdmin admin, TopicPartition tp, long current, long wanted, String how) {
        long start = admin.earliestOffset(tp);
        if (wanted < start) {
            return new PlannedReset(
                    tp, current, start, how + wanted + " is below the log start " + start + ": clamped to " + start);
        }
        long end = admin.latestOffset(tp);
        if (wanted > end) {
            return new PlannedReset(
                    tp, current, end, how + wanted + " is above the log end " + end + ": clamped to " + end);
        }
        return new PlannedReset(tp, current, wanted, "");
    }
}
