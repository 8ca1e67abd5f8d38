package io.stellflow.broker.topic;

/**
 * Told after records were appended to a {@link Partition}, on the appending thread. Implementations
 * must return quickly (hand the work to an executor) and must not throw.
 */
@FunctionalInterface
public interface AppendListener {
    /** Records were appended; the partition's log end offset and high watermark moved. */
    void onAppend();
}
