package io.stellflow.storage;

/** Outcome of {@link UnifiedLog#maybeIncrementLogStartOffset} (delete-records). */
public enum LogStartOffsetResult {
    /** The log start offset was raised and checkpointed. */
    INCREMENTED,
    /** The requested offset is not above the current log start offset: nothing changed. */
    UNCHANGED,
    /** The requested offset is above the given high watermark (Kafka: OFFSET_OUT_OF_RANGE). */
    BEYOND_HIGH_WATERMARK
}
