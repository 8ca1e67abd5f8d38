package io.stellflow.client;

import io.stellflow.protocol.Errors;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The partitions assigned to a {@link StellflowConsumer} and their fetch states ({@link
 * ConsumerPartitionState}), in assignment order: assignment changes (manual or from the group),
 * seeks, the {@code auto.offset.reset} of a partition without a position, and the fetch epochs that
 * tell a current Fetch answer from a stale one.
 *
 * <p>Thread-safety: NOT thread-safe; confined to the consumer's application thread.
 */
final class ConsumerPositions {
    private final ConsumerConfig config;
    private final OffsetLookup offsets;
    private final Map<TopicPartition, ConsumerPartitionState> assigned = new LinkedHashMap<>();
    /** Partitions whose position must come from auto.offset.reset because the group has no commit. */
    private final Set<TopicPartition> noCommittedOffset = new LinkedHashSet<>();

    /**
     * Source of {@code ConsumerPartitionState.epoch} values, consumer-wide: a Fetch answer counts only
     * for the state (and seek) it was sent for, also when the partition was revoked and assigned again
     * while it was in flight (a per-state counter would start at 0 again and take the old answer).
     */
    private int fetchEpochs;

    ConsumerPositions(ConsumerConfig config, OffsetLookup offsets) {
        this.config = config;
        this.offsets = offsets;
    }

    /** The live map of assigned partitions to their states, in assignment order (iteration only). */
    Map<TopicPartition, ConsumerPartitionState> states() {
        return assigned;
    }

    /** The state of {@code tp}, or null when it is not assigned. */
    ConsumerPartitionState get(TopicPartition tp) {
        return assigned.get(tp);
    }

    boolean isEmpty() {
        return assigned.isEmpty();
    }

    /** See {@link StellflowConsumer#assign}: positions of partitions that stay assigned are kept. */
    void assign(Collection<TopicPartition> partitions) {
        Map<TopicPartition, ConsumerPartitionState> next = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            ConsumerPartitionState s = assigned.get(tp);
            next.put(tp, s != null ? s : newPartitionState());
        }
        assigned.clear();
        assigned.putAll(next);
    }

    /** The group revoked {@code partitions}. */
    void revoke(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            assigned.remove(tp); // a Fetch in flight for it is dropped as stale when it comes back
            noCommittedOffset.remove(tp);
        }
    }

    /** The group assigned partitions with their committed offsets (-1: none, auto.offset.reset). */
    void assignCommitted(Map<TopicPartition, Long> committedOffsets) {
        committedOffsets.forEach((tp, offset) -> {
            ConsumerPartitionState s = newPartitionState();
            if (offset >= 0) {
                s.moveTo(offset);
            } else {
                noCommittedOffset.add(tp);
            }
            assigned.put(tp, s);
        });
    }

    private ConsumerPartitionState newPartitionState() {
        ConsumerPartitionState s = new ConsumerPartitionState();
        s.epoch = ++fetchEpochs;
        return s;
    }

    /** The currently assigned partitions, in assignment order (a copy). */
    Set<TopicPartition> assignment() {
        return new LinkedHashSet<>(assigned.keySet());
    }

    /** The known position of every assigned partition (the offsets a commit sends). */
    Map<TopicPartition, Long> positions() {
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        assigned.forEach((tp, s) -> {
            if (s.position >= 0) {
                out.put(tp, s.position);
            }
        });
        return out;
    }

    /** See {@link StellflowConsumer#seek}; {@code offset} is already checked. */
    void seek(TopicPartition tp, long offset) {
        ConsumerPartitionState s = state(tp);
        s.moveTo(offset);
        s.epoch = ++fetchEpochs;
        s.fetchInFlight = false;
    }

    /** See {@link StellflowConsumer#position}. */
    long position(TopicPartition tp) {
        ConsumerPartitionState s = state(tp);
        if (s.position < 0) {
            resetPosition(tp, s);
        }
        return s.position;
    }

    /** The sum over the partitions of the last answer's readable end minus the position. */
    long lag() {
        long lag = 0;
        for (ConsumerPartitionState s : assigned.values()) {
            if (s.visibleEnd >= 0 && s.position >= 0) {
                lag += Math.max(0, s.visibleEnd - s.position);
            }
        }
        return lag;
    }

    /** Ns until the first partition without a Fetch in flight may retry; Long.MAX_VALUE: none waits. */
    long nextRetryWaitNs() {
        long now = System.nanoTime();
        long wait = Long.MAX_VALUE;
        for (ConsumerPartitionState s : assigned.values()) {
            if (!s.fetchInFlight && s.retryAfterNs - now > 0) {
                wait = Math.min(wait, s.retryAfterNs - now);
            }
        }
        return wait;
    }

    private ConsumerPartitionState state(TopicPartition tp) {
        ConsumerPartitionState s = assigned.get(tp);
        if (s == null) {
            throw new IllegalStateException(tp + " is not assigned");
        }
        return s;
    }

    /** Gives every partition without a position one from {@code auto.offset.reset}. */
    void resolvePositions() {
        for (Map.Entry<TopicPartition, ConsumerPartitionState> e : assigned.entrySet()) {
            if (e.getValue().position < 0) {
                resetPosition(e.getKey(), e.getValue());
            }
        }
    }

    private void resetPosition(TopicPartition tp, ConsumerPartitionState s) {
        switch (config.autoOffsetReset()) {
            case "earliest" -> s.moveTo(offsets.lookup(tp, OffsetLookup.EARLIEST));
            case "latest" -> s.moveTo(offsets.lookup(tp, OffsetLookup.LATEST));
            default -> {
                if (noCommittedOffset.contains(tp)) {
                    throw new StellflowException(
                            Errors.OFFSET_OUT_OF_RANGE,
                            "group " + config.groupId() + " has no committed offset for " + tp
                                    + " and auto.offset.reset=none: commit or reset one (stellflow-consumer-groups"
                                    + " --reset-offsets), or set auto.offset.reset to earliest or latest");
                }
                throw new StellflowException(
                        Errors.OFFSET_OUT_OF_RANGE, "no valid position for " + tp + " and auto.offset.reset=none");
            }
        }
        noCommittedOffset.remove(tp);
        s.epoch = ++fetchEpochs;
        s.fetchInFlight = false;
    }

    /**
     * Forgets a completed Fetch whose records will not be handed out: its partition (if the answer is
     * still current) fetches again from {@code position} (-1: its current position), and a Fetch
     * already sent past it is discarded.
     */
    void refetch(CompletedFetch f, long position) {
        ConsumerPartitionState s = assigned.get(f.tp);
        if (s != null && s.epoch == f.epoch) {
            s.moveTo(position >= 0 ? position : s.position);
            s.epoch = ++fetchEpochs;
            s.fetchInFlight = false;
        }
    }
}
