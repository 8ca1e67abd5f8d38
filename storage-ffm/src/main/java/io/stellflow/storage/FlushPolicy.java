package io.stellflow.storage;

/**
 * The {@code flush.messages} / {@code flush.ms} policy of one log: counts records appended since
 * the last flush and tells the appender when the next flush is due. With the defaults ({@code
 * Long.MAX_VALUE} for both) it never asks for a flush: durability is left to the OS page cache and
 * replication, as in Kafka (docs/durability.md).
 *
 * <p>Thread-safety: confined to the log's write lock.
 */
final class FlushPolicy {
    private long flushMessages;
    private long flushNs;
    private long unflushedRecords;
    private long lastFlushNs;

    FlushPolicy(LogConfig config, long nowNs) {
        reconfigure(config);
        this.lastFlushNs = nowNs;
    }

    /** Takes {@code flush.messages} / {@code flush.ms} from {@code config}; counts since the last flush stay. */
    void reconfigure(LogConfig config) {
        this.flushMessages = config.flushMessages();
        long ms = config.flushMs();
        this.flushNs = ms >= Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : ms * 1_000_000L; // saturated
    }

    /** Counts {@code records} just appended; true when a flush is due (by count or by time). */
    boolean recordAppended(long records, long nowNs) {
        unflushedRecords += records;
        return unflushedRecords >= flushMessages || (flushNs != Long.MAX_VALUE && nowNs - lastFlushNs >= flushNs);
    }

    /** A flush completed at {@code nowNs}: counts restart. */
    void flushed(long nowNs) {
        unflushedRecords = 0;
        lastFlushNs = nowNs;
    }
}
