package io.stellflow.storage;

import io.stellflow.protocol.compression.CompressionType;
import java.util.Locale;

/**
 * Configuration of one partition log. Immutable and validated at construction. Keys are Kafka's
 * broker-level names ({@code log.*}); the topic-level names are given where they differ.
 *
 * <p>Build with {@link #builder()} (every key defaulted), {@link #defaults()}, or the five-value
 * constructor kept for existing callers (retention and deletion delay at their defaults).
 *
 * <p>Thread-safety: immutable, safe to share.
 *
 * @param segmentBytes {@code log.segment.bytes}: a segment rolls before its {@code .log} file would
 *     exceed this many bytes (a single batch larger than this still gets a segment of its own).
 *     Default 1 GiB. Must be &gt;= 1024.
 * @param indexIntervalBytes {@code log.index.interval.bytes}: one sparse index entry per this many
 *     bytes of appended batches. Default 4096. Must be &gt;= 0 (0 = an entry per batch).
 * @param indexMaxBytes {@code log.index.size.max.bytes}: preallocated size of each {@code .index}
 *     file (the {@code .timeindex} gets room for one entry more, see {@link TimeIndexLayout}); a
 *     segment rolls when its index is full. Default 10 MiB. Must be &gt;= 8 (one entry); rounded down
 *     to a multiple of 8.
 * @param flushMessages {@code log.flush.interval.messages}: fsync after this many appended records.
 *     {@link Long#MAX_VALUE} (default) = never, rely on the OS page cache. Must be &gt;= 1.
 * @param flushMs {@code log.flush.interval.ms}: fsync when an append happens at least this many
 *     milliseconds after the last flush. {@link Long#MAX_VALUE} (default) = never. Must be &gt;= 0.
 * @param retentionMs {@code log.retention.ms} (topic: {@code retention.ms}): a sealed segment is
 *     deleted once its retention time (see {@link UnifiedLog#deleteOldSegments}) is more than this
 *     many ms in the past. Default 7 days; -1 = no time limit. Must be &gt;= -1.
 * @param retentionBytes {@code log.retention.bytes} (topic: {@code retention.bytes}): oldest sealed
 *     segments are deleted while the log would stay at or above this size without them. Default -1 =
 *     no size limit. Must be &gt;= -1.
 * @param fileDeleteDelayMs {@code log.segment.delete.delay.ms} (topic: {@code file.delete.delay.ms}):
 *     a deleted segment's files are renamed to {@code .deleted} at once and removed this many ms
 *     later, so reads in flight finish. Default 60000. Must be &gt;= 0.
 * @param segmentMs {@code log.roll.ms} (topic: {@code segment.ms}): an append rolls a non-empty
 *     active segment that started at least this many ms ago (its first append; after a restart the
 *     later of its first batch's timestamp and the file's creation time, capped by the last append),
 *     so time retention can act on it.
 *     Default 7 days. Must be &gt;= 1.
 * @param cleanupPolicy {@code log.cleanup.policy} (topic: {@code cleanup.policy}): {@code delete}
 *     (default: retention only), {@code compact} ({@link LogCleaner}; retention then only removes
 *     segments below the log start offset, and appends of records with a null key are rejected) or
 *     {@code compact,delete} (both). See {@link CleanupPolicy#parse}.
 * @param deleteRetentionMs {@code log.cleaner.delete.retention.ms} (topic: {@code
 *     delete.retention.ms}): compaction keeps a tombstone (a record with a null value) until its
 *     segment's last modification (last append, kept across cleanings) is this many ms in the past.
 *     Default 86400000 (1 day). Must be &gt;= 0.
 * @param minCleanableDirtyRatio {@code log.cleaner.min.cleanable.ratio} (topic: {@code
 *     min.cleanable.dirty.ratio}): {@link UnifiedLog#compact} rewrites nothing unless at least this
 *     fraction of the records in the cleanable range would be removed. Default 0.5. Must be in [0,
 *     1]; 0 = always rewrite.
 * @param compression {@code compression.type} and the codec levels (topic: the same keys): what the
 *     leader does with a batch's codec before it appends it ({@link LogCompression}). Default
 *     {@code producer}: stored as produced.
 * @param preallocate {@code log.preallocate} (topic: {@code preallocate}): the active segment's
 *     {@code .log} reserves its disk blocks ahead of its end without changing its size ({@link
 *     FileAllocator#preallocate}): as many bytes as the segment will then hold, at least 1 MiB, at
 *     most 16 MiB, never past {@code segmentBytes}; appends into the range skip the file system's
 *     per-page block reservation, and a roll or close gives the unused blocks back ({@link
 *     LogSegment}). Applies from the next segment. Default true (Kafka's default is false: its
 *     preallocation extends the file to the whole segment). Where the file system cannot, or is too
 *     full for a step, appends go on without it.
 * @throws IllegalArgumentException naming the key and the bad value
 */
public record LogConfig(
        int segmentBytes,
        int indexIntervalBytes,
        int indexMaxBytes,
        long flushMessages,
        long flushMs,
        long retentionMs,
        long retentionBytes,
        long fileDeleteDelayMs,
        long segmentMs,
        CleanupPolicy cleanupPolicy,
        long deleteRetentionMs,
        double minCleanableDirtyRatio,
        LogCompression compression,
        boolean preallocate) {

    /** 1 GiB, as Kafka. */
    public static final int DEFAULT_SEGMENT_BYTES = 1 << 30;

    /** 4 KiB: with 1 KiB batches one entry per ~4 batches; a lookup then scans at most ~4 KiB. */
    public static final int DEFAULT_INDEX_INTERVAL_BYTES = 4096;

    /** 10 MiB = 1,310,720 entries of 8 bytes; at 4 KiB per entry that covers a 5 GiB segment. */
    public static final int DEFAULT_INDEX_MAX_BYTES = 10 * 1024 * 1024;

    /** 7 days (168 h), as Kafka. */
    public static final long DEFAULT_RETENTION_MS = 7L * 24 * 60 * 60 * 1000;

    /** No size limit, as Kafka. */
    public static final long DEFAULT_RETENTION_BYTES = -1;

    /** 60 s, as Kafka: far longer than any read of a segment takes. */
    public static final long DEFAULT_FILE_DELETE_DELAY_MS = 60_000;

    /** 7 days (168 h), as Kafka. */
    public static final long DEFAULT_SEGMENT_MS = 7L * 24 * 60 * 60 * 1000;

    /** 1 day, as Kafka. */
    public static final long DEFAULT_DELETE_RETENTION_MS = 24L * 60 * 60 * 1000;

    /** 0.5, as Kafka. */
    public static final double DEFAULT_MIN_CLEANABLE_DIRTY_RATIO = 0.5;

    /**
     * {@code cleanup.policy}: what happens to old records.
     *
     * <p>Thread-safety: immutable.
     */
    public enum CleanupPolicy {
        /** Retention by time, size and log start offset (the default). */
        DELETE(false, true),
        /** Compaction only: the last record per key is kept; no time or size retention. */
        COMPACT(true, false),
        /** Compaction and retention. */
        COMPACT_DELETE(true, true);

        private final boolean compact;
        private final boolean delete;

        CleanupPolicy(boolean compact, boolean delete) {
            this.compact = compact;
            this.delete = delete;
        }

        /** True when compaction applies (and null keys are rejected at append). */
        public boolean compact() {
            return compact;
        }

        /** True when time and size retention apply. */
        public boolean delete() {
            return delete;
        }

        /**
         * Parses Kafka's list syntax: {@code delete}, {@code compact}, {@code compact,delete} or
         * {@code delete,compact} (case-insensitive, blanks around commas ignored).
         *
         * @throws IllegalArgumentException naming the key and the bad value
         */
        public static CleanupPolicy parse(String value) {
            boolean c = false;
            boolean d = false;
            for (String part : value.split(",", -1)) {
                switch (part.strip().toLowerCase(Locale.ROOT)) {
                    case "compact" -> c = true;
                    case "delete" -> d = true;
                    default ->
                        throw new IllegalArgumentException(
                                "cleanup.policy must be delete, compact or" + " compact,delete: " + value);
                }
            }
            return c && d ? COMPACT_DELETE : c ? COMPACT : DELETE;
        }

        /** The Kafka spelling: {@code delete}, {@code compact} or {@code compact,delete}. */
        @Override
        public String toString() {
            return this == COMPACT_DELETE ? "compact,delete" : name().toLowerCase(Locale.ROOT);
        }
    }

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
        if (retentionMs < -1) {
            throw new IllegalArgumentException("log.retention.ms must be >= -1: " + retentionMs);
        }
        if (retentionBytes < -1) {
            throw new IllegalArgumentException("log.retention.bytes must be >= -1: " + retentionBytes);
        }
        if (fileDeleteDelayMs < 0) {
            throw new IllegalArgumentException("log.segment.delete.delay.ms must be >= 0: " + fileDeleteDelayMs);
        }
        if (segmentMs < 1) {
            throw new IllegalArgumentException("log.roll.ms must be >= 1: " + segmentMs);
        }
        if (cleanupPolicy == null) {
            throw new IllegalArgumentException("cleanup.policy must not be null");
        }
        if (deleteRetentionMs < 0) {
            throw new IllegalArgumentException("delete.retention.ms must be >= 0: " + deleteRetentionMs);
        }
        if (!(minCleanableDirtyRatio >= 0 && minCleanableDirtyRatio <= 1)) {
            throw new IllegalArgumentException(
                    "min.cleanable.dirty.ratio must be in [0, 1]: " + minCleanableDirtyRatio);
        }
        if (compression == null) {
            throw new IllegalArgumentException("compression must not be null");
        }
    }

    /**
     * The twelve settings before compression; {@code compression.type=producer} at default levels,
     * {@code log.preallocate} on.
     */
    public LogConfig(
            int segmentBytes,
            int indexIntervalBytes,
            int indexMaxBytes,
            long flushMessages,
            long flushMs,
            long retentionMs,
            long retentionBytes,
            long fileDeleteDelayMs,
            long segmentMs,
            CleanupPolicy cleanupPolicy,
            long deleteRetentionMs,
            double minCleanableDirtyRatio) {
        this(
                segmentBytes,
                indexIntervalBytes,
                indexMaxBytes,
                flushMessages,
                flushMs,
                retentionMs,
                retentionBytes,
                fileDeleteDelayMs,
                segmentMs,
                cleanupPolicy,
                deleteRetentionMs,
                minCleanableDirtyRatio,
                LogCompression.DEFAULT,
                true);
    }

    /** The nine pre-compaction settings; cleanup policy {@code delete} and the cleaner defaults. */
    public LogConfig(
            int segmentBytes,
            int indexIntervalBytes,
            int indexMaxBytes,
            long flushMessages,
            long flushMs,
            long retentionMs,
            long retentionBytes,
            long fileDeleteDelayMs,
            long segmentMs) {
        this(
                segmentBytes,
                indexIntervalBytes,
                indexMaxBytes,
                flushMessages,
                flushMs,
                retentionMs,
                retentionBytes,
                fileDeleteDelayMs,
                segmentMs,
                CleanupPolicy.DELETE,
                DEFAULT_DELETE_RETENTION_MS,
                DEFAULT_MIN_CLEANABLE_DIRTY_RATIO);
    }

    /** The five slice-1 settings; retention, the deletion delay and the roll time take their defaults. */
    public LogConfig(int segmentBytes, int indexIntervalBytes, int indexMaxBytes, long flushMessages, long flushMs) {
        this(
                segmentBytes,
                indexIntervalBytes,
                indexMaxBytes,
                flushMessages,
                flushMs,
                DEFAULT_RETENTION_MS,
                DEFAULT_RETENTION_BYTES,
                DEFAULT_FILE_DELETE_DELAY_MS,
                DEFAULT_SEGMENT_MS);
    }

    /** The defaults: 1 GiB segments, 4 KiB index interval, 10 MiB index, never flush explicitly. */
    public static LogConfig defaults() {
        return builder().build();
    }

    /**
     * Bytes a new segment's indexes take on disk when it is created or rolled: the offset index and
     * the time index, both allocated at their whole preallocated size ({@link FileAllocator}).
     * About 2.5 x {@code log.index.size.max.bytes}; what a roll needs free besides the batch.
     */
    public long preallocatedIndexBytes() {
        return indexMaxBytes + TimeIndexLayout.maxBytesFor(indexMaxBytes);
    }

    /** A builder with every key at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        return new Builder()
                .segmentBytes(segmentBytes)
                .indexIntervalBytes(indexIntervalBytes)
                .indexMaxBytes(indexMaxBytes)
                .flushMessages(flushMessages)
                .flushMs(flushMs)
                .retentionMs(retentionMs)
                .retentionBytes(retentionBytes)
                .fileDeleteDelayMs(fileDeleteDelayMs)
                .segmentMs(segmentMs)
                .cleanupPolicy(cleanupPolicy)
                .deleteRetentionMs(deleteRetentionMs)
                .minCleanableDirtyRatio(minCleanableDirtyRatio)
                .compression(compression)
                .preallocate(preallocate);
    }

    /** Mutable builder; {@link #build} validates. Not thread-safe. */
    public static final class Builder {
        private int segmentBytes = DEFAULT_SEGMENT_BYTES;
        private int indexIntervalBytes = DEFAULT_INDEX_INTERVAL_BYTES;
        private int indexMaxBytes = DEFAULT_INDEX_MAX_BYTES;
        private long flushMessages = Long.MAX_VALUE;
        private long flushMs = Long.MAX_VALUE;
        private long retentionMs = DEFAULT_RETENTION_MS;
        private long retentionBytes = DEFAULT_RETENTION_BYTES;
        private long fileDeleteDelayMs = DEFAULT_FILE_DELETE_DELAY_MS;
        private long segmentMs = DEFAULT_SEGMENT_MS;
        private CleanupPolicy cleanupPolicy = CleanupPolicy.DELETE;
        private long deleteRetentionMs = DEFAULT_DELETE_RETENTION_MS;
        private double minCleanableDirtyRatio = DEFAULT_MIN_CLEANABLE_DIRTY_RATIO;
        private LogCompression compression = LogCompression.DEFAULT;
        private boolean preallocate = true;

        private Builder() {}

        public Builder segmentBytes(int v) {
            segmentBytes = v;
            return this;
        }

        public Builder indexIntervalBytes(int v) {
            indexIntervalBytes = v;
            return this;
        }

        public Builder indexMaxBytes(int v) {
            indexMaxBytes = v;
            return this;
        }

        public Builder flushMessages(long v) {
            flushMessages = v;
            return this;
        }

        public Builder flushMs(long v) {
            flushMs = v;
            return this;
        }

        public Builder retentionMs(long v) {
            retentionMs = v;
            return this;
        }

        public Builder retentionBytes(long v) {
            retentionBytes = v;
            return this;
        }

        public Builder fileDeleteDelayMs(long v) {
            fileDeleteDelayMs = v;
            return this;
        }

        public Builder segmentMs(long v) {
            segmentMs = v;
            return this;
        }

        public Builder cleanupPolicy(CleanupPolicy v) {
            cleanupPolicy = v;
            return this;
        }

        /** Kafka's spelling, see {@link CleanupPolicy#parse}. */
        public Builder cleanupPolicy(String v) {
            cleanupPolicy = CleanupPolicy.parse(v);
            return this;
        }

        public Builder deleteRetentionMs(long v) {
            deleteRetentionMs = v;
            return this;
        }

        public Builder minCleanableDirtyRatio(double v) {
            minCleanableDirtyRatio = v;
            return this;
        }

        public Builder compression(LogCompression v) {
            compression = v;
            return this;
        }

        /** {@code compression.type}: producer, uncompressed or a codec name (any case). */
        public Builder compressionType(String v) {
            compression = compression.withName(v);
            return this;
        }

        /** {@code compression.produce.policy}: accept or refuse (any case). */
        public Builder compressionProducePolicy(String v) {
            compression = compression.withProducePolicy(v);
            return this;
        }

        /** {@code compression.<codec>.level} of {@code type}; the range is checked here. */
        public Builder compressionLevel(CompressionType type, int level) {
            compression = compression.withLevel(type, level);
            return this;
        }

        /** {@code log.preallocate} (topic: {@code preallocate}). */
        public Builder preallocate(boolean v) {
            preallocate = v;
            return this;
        }

        /** @throws IllegalArgumentException naming the key and the bad value */
        public LogConfig build() {
            return new LogConfig(
                    segmentBytes,
                    indexIntervalBytes,
                    indexMaxBytes,
                    flushMessages,
                    flushMs,
                    retentionMs,
                    retentionBytes,
                    fileDeleteDelayMs,
                    segmentMs,
                    cleanupPolicy,
                    deleteRetentionMs,
                    minCleanableDirtyRatio,
                    compression,
                    preallocate);
        }
    }
}
