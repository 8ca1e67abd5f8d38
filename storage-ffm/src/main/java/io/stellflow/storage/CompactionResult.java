package io.stellflow.storage;

/**
 * What {@link UnifiedLog#compact} did.
 *
 * @param segmentsCleaned sealed segments rewritten and swapped in
 * @param recordsRemoved records removed (superseded values and expired tombstones)
 * @param bytesBefore {@code .log} bytes of the rewritten segments before
 * @param bytesAfter {@code .log} bytes of the rewritten segments after
 * @param dirtyRatio fraction of the keyed records in the cleanable range superseded by a later
 *     record with the same key (0 when nothing was cleanable)
 */
public record CompactionResult(
        int segmentsCleaned, long recordsRemoved, long bytesBefore, long bytesAfter, double dirtyRatio) {
    /** Nothing cleanable or nothing done. */
    public static final CompactionResult NONE = new CompactionResult(0, 0, 0, 0, 0);
}
