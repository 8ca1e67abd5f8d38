package io.stellflow.broker.cluster;

import io.stellflow.broker.topic.Partition;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * The level of the per-partition lines ({@code PARTITION_OPENED}, {@code PARTITION_LEADER_CHANGED})
 * around a start: a restart opens every hosted partition at once and learns their leaders over the
 * next images, so until each partition the first image opened has a leader (or {@link #MAX_MS} has
 * passed: a partition without a live replica stays leaderless) they go to DEBUG, then one {@code
 * PARTITIONS_OPENED count= leaders= leaderless= ms=} line at INFO; afterwards a new partition or
 * leader is a rare event and stays INFO ({@code docs/observability.md}, issue #22).
 *
 * <p>Thread-safety: none; the replica manager calls it under its reconcile lock.
 */
final class StartUpPartitionLog {
    /** Longest start-up, ms, after which the summary is written whatever is still leaderless. */
    static final long MAX_MS = 60_000;

    private final Logger log;
    private Level level = Level.INFO;
    private long beganNs;
    private int opened;
    private int leaders;
    private final Set<Partition> leaderless = new HashSet<>();

    StartUpPartitionLog(Logger log) {
        this.log = log;
    }

    /** The first metadata image is being applied: per-partition lines go to DEBUG from now on. */
    void begin() {
        beganNs = System.nanoTime();
        level = Level.DEBUG;
    }

    /** The level of a per-partition line now. */
    Level level() {
        return level;
    }

    /** A partition was opened (as a follower without a leader yet). */
    void opened(Partition partition) {
        if (level == Level.DEBUG) {
            opened++;
            leaderless.add(partition);
        }
    }

    /** The image names a leader for {@code partition}. */
    void hasLeader(Partition partition) {
        leaderless.remove(partition);
    }

    /** This broker became the partition's leader. */
    void led() {
        if (level == Level.DEBUG) {
            leaders++;
        }
    }

    /** After an image: writes the summary and ends the start-up once nothing waits for a leader. */
    void imageApplied() {
        if (level != Level.DEBUG) {
            return;
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - beganNs);
        if (leaderless.isEmpty() || ms >= MAX_MS) {
            log.info(
                    "PARTITIONS_OPENED count={} leaders={} leaderless={} ms={}",
                    opened,
                    leaders,
                    leaderless.size(),
                    ms);
            level = Level.INFO;
            leaderless.clear();
        }
    }
}
