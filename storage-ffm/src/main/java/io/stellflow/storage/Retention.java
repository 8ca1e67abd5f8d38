package io.stellflow.storage;

/**
 * Decides which segments retention may delete (the rules are documented on {@link
 * UnifiedLog#deleteOldSegments}). Pure: reads segment sizes, timestamps and base offsets only.
 *
 * <p>Thread-safety: stateless; called by the log's writer.
 */
final class Retention {
    private Retention() {}

    /**
     * The retention time of a segment (ms since the epoch): its max record timestamp capped by the
     * wall-clock time of its last append; the last append time when it has no timestamps.
     */
    static long retentionTimeMs(LogSegment s) {
        long maxTs = s.maxTimestampMs();
        long appended = s.lastAppendTimeMs();
        return maxTs <= TimeIndex.NO_TIMESTAMP ? appended : Math.min(maxTs, appended);
    }

    /**
     * How many segments from the start of {@code segs} may be deleted: each must be sealed (not the
     * last), hold only offsets below {@code highWatermark} (its successor's base &lt;= the HW), and
     * be below {@code logStartOffset}, or past {@code retention.ms}, or not needed for {@code
     * retention.bytes} (these two only when the cleanup policy includes {@code delete}).
     */
    static int deletablePrefix(
            LogSegment[] segs, LogConfig config, long nowMs, long highWatermark, long logStartOffset) {
        // cleanup.policy=compact alone: only the log start offset deletes (Kafka's rule).
        boolean deletePolicy = config.cleanupPolicy().delete();
        boolean timeLimited = deletePolicy && config.retentionMs() >= 0;
        boolean sizeLimited = deletePolicy && config.retentionBytes() >= 0;
        long excessBytes = 0;
        if (sizeLimited) {
            long total = 0;
            for (LogSegment s : segs) {
                total += s.sizeBytes();
            }
            excessBytes = total - config.retentionBytes();
        }
        int count = 0;
        for (int i = 0; i < segs.length - 1; i++) {
            long nextBase = segs[i + 1].baseOffset;
            if (nextBase > highWatermark) {
                break;
            }
            LogSegment s = segs[i];
            boolean byStartOffset = nextBase <= logStartOffset;
            boolean byTime = timeLimited && nowMs - retentionTimeMs(s) > config.retentionMs();
            boolean bySize = sizeLimited && excessBytes - s.sizeBytes() >= 0;
            if (!byStartOffset && !byTime && !bySize) {
                break;
            }
            excessBytes -= s.sizeBytes();
            count++;
        }
        return count;
    }
}
