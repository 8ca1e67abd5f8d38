package io.stellflow.storage;

/**
 * Configuration of one partition log. Immutable and validated at construction.
 *
 * <p>Thread-safety: immutable, safe to share.
 *
 * @param segmentBytes {@code log.segment.bytes}: a segment rolls before its {@code .log} file would
 *     exceed this many bytes (a single batch larger than this still gets a segment of its own).
 *     Default 1 GiB. Must be &gt;= 1024.
 * @param indexIntervalBytes {@code log.index.interval.bytes}: one sparse index entry per this many
 *     bytes of appended batches. Default 4096. Must be &gt;= 0 (0 = an entry per batch).
 * @param indexMaxBytes {@code log.index.size.max.bytes}: preallocated size of each {@code .index}
 *     file; a segment rolls when its index is full. Default 10 MiB. Must be &gt;= 8 (one entry);
 *     rounded down to a multiple of 8.
 * @param flushMessages {@code log.flush.interval.messages}: fsync after this many appended records.
 *     {@link Long#MAX_VALUE} (default) = never, rely on the OS page cache. Must be &gt;= 1.
 * @param flushMs {@code log.flush.interval.ms}: fsync when an append happens at least this many
 *     milliseconds after the last flush. {@link Long#MAX_VALUE} (default) = never. Must be &gt;= 0.
 * @throws IllegalArgumentException naming the key and the bad value
 */
public record LogConfig(int segmentBytes, int indexIntervalBytes, int indexMaxBytes, long flushMessages, long flushMs) {

    /** 1 GiB, as Kafka. */
    public static final int DEFAULT_SEGMENT_BYTES = 1 << 30;

    /** 4 KiB: with 1 KiB batches one entry per ~4 batches; a lookup then scans at most ~4 KiB. */
    public static final int DEFAULT_INDEX_INTERVAL_BYTES = 4096;

    /** 10 MiB = 1,310,720 entries of 8 bytes; at 4 KiB per entry that covers a 5 GiB segment. */
    public static final int DEFAULT_INDEX_MAX_BYTES = 10 * 1024 * 1024;

    public LogConfig {
        if (segmentBytes < 1024) {
            throw new IllegalArgumentException("log.segment.bytes must be >= 1024: " + segmentBytes);
        }
        if (indexIntervalBytes < 0) {
            throw new IllegalArgumentException("log.index.interval.bytes must be >= 0: " + indexIntervalBytes);
        }
        if (indexMaxBytes < 8) {
            throw new IllegalArgumentException("log.index.size.max.bytes must be >= 8: " + indexMaxBytes);
        }
        if (flushMessages < 1) {
            throw new IllegalArgumentException("log.flush.interval.messages must be >= 1: " + flushMessages);
        }
        if (flushMs < 0) {
            throw new IllegalArgumentException("log.flush.interval.ms must be >= 0: " + flushMs);
        }
    }

    /** The defaults: 1 GiB segments, 4 KiB index interval, 10 MiB index, never flush explicitly. */
    public static LogConfig defaults() {
        return new LogConfig(
                DEFAULT_SEGMENT_BYTES,
                DEFAULT_INDEX_INTERVAL_BYTES,
                DEFAULT_INDEX_MAX_BYTES,
                Long.MAX_VALUE,
                Long.MAX_VALUE);
    }
}
