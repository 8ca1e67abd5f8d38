package io.stellflow.broker.coordinator;

import java.util.List;

/**
 * What a shard command produced: the records to append to the coordinator partition (possibly none)
 * and the response to send once they are committed. The shard has already applied the records to
 * its in-memory state when it returns this (apply on write); the runtime appends them as one batch
 * and completes the response only when the high watermark has passed the batch (acks=all, {@code
 * ../shared/DESIGN.md} §7). If the append fails, the runtime answers the command's error response
 * and reloads the shard from the log, so memory never keeps a state the log does not hold.
 *
 * @param records records to append, in order; empty for a read-only or no-op command
 * @param response the answer for the caller, sent after the records are committed
 * @param <T> the response type
 */
public record CoordinatorResult<T>(List<CoordinatorRecord> records, T response) {
    public CoordinatorResult {
        records = List.copyOf(records);
    }

    /** A result that writes nothing. */
    public static <T> CoordinatorResult<T> of(T response) {
        return new CoordinatorResult<>(List.of(), response);
    }
}
