package io.stellflow.storage;

/**
 * One aborted transaction of a partition ({@link AbortedTxnIndexLayout}): the records of {@code
 * producerId} from {@code firstOffset} (its BEGIN marker) up to {@code lastOffset} (its ABORT
 * marker) are not to be delivered at isolationLevel 1.
 *
 * @param lastStableOffset the smallest first offset still open after the abort, or lastOffset + 1
 */
public record AbortedTxn(long producerId, long firstOffset, long lastOffset, long lastStableOffset) {}
