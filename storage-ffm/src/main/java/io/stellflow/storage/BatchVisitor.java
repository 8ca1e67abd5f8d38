package io.stellflow.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;

/**
 * Receives whole stored batches from {@link UnifiedLog#read}, on the reading thread. Implementations
 * may read the channel positionally but must not change its position or write to it.
 */
public interface BatchVisitor {
    /**
     * One stored batch: {@code sizeInBytes} bytes at {@code filePosition} of {@code channel}, with
     * records at offsets {@code baseOffset..lastOffset}. The stored bytes 0-3 hold baseOffset minus
     * the segment base (not meaningful to clients; rewrite them); bytes 8-11 hold the leader
     * epoch of the append.
     */
    void batch(FileChannel channel, long filePosition, int sizeInBytes, long baseOffset, long lastOffset)
            throws IOException;

    /**
     * As {@link #batch(FileChannel, long, int, long, long)} with the batch's stored attributes (int16:
     * codec in bits 0-2), read with the header anyway; {@link UnifiedLog#read} calls this one. A
     * visitor that needs the codec (Fetch v0 decompresses compressed batches) overrides it.
     */
    default void batch(
            FileChannel channel, long filePosition, int sizeInBytes, long baseOffset, long lastOffset, short attributes)
            throws IOException {
        batch(channel, filePosition, sizeInBytes, baseOffset, lastOffset);
    }
}
