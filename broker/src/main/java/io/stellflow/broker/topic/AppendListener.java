package io.stellflow.broker.topic;

/**
 * Told after a {@link Partition} moved, on the thread that moved it: records were appended ({@link
 * Partition#addListener}), or the high watermark advanced or the replica state changed ({@link
 * Partition#addHighWatermarkListener}). Implementations must return quickly (hand the work to an
 * executor, or answer a small response) and must not throw.
 */
@FunctionalInterface
public interface AppendListener {
    /** The partition moved: check again whatever this listener waits for. */
    void onAppend();
}
