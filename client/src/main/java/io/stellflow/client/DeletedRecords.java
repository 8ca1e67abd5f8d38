package io.stellflow.client;

import io.stellflow.protocol.Errors;

/**
 * One partition's outcome of {@link StellflowAdmin#deleteRecords}: the partition's log start offset
 * after the call (its low watermark), or -1 with the error code that refused it.
 *
 * @param errorCode {@link Errors#NONE}, or OFFSET_OUT_OF_RANGE (the offset is above the high
 *     watermark), UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER / LEADER_NOT_AVAILABLE (still so
 *     after the retries), {@link StellflowException#NETWORK_ERROR}, ...
 * @param lowWatermark the new log start offset; -1 on error
 */
public record DeletedRecords(short errorCode, long lowWatermark) {
    /** True when the partition's log start is now at least the requested offset. */
    public boolean ok() {
        return errorCode == Errors.NONE;
    }
}
