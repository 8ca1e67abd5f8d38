package io.stellflow.storage;

/**
 * A record's timestamp (ms since the epoch) and offset: the answer of {@link
 * UnifiedLog#offsetForTimestamp} and {@link UnifiedLog#offsetOfMaxTimestamp}. Immutable.
 */
public record TimestampOffset(long timestampMs, long offset) {}
