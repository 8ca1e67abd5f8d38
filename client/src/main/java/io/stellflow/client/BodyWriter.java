package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.GatheringBuffer;

/** Writes a request body (no header, no frame length) into {@code out}. Message records' {@code write} fits. */
@FunctionalInterface
public interface BodyWriter {
    void write(ByteBuf out);

    /**
     * Expected body size in bytes, so the request frame is allocated once instead of growing (a 1 MiB
     * Produce body written into a 256-byte buffer would be copied about 12 times while it doubles).
     */
    default int sizeHintBytes() {
        return 256;
    }

    /**
     * True when the body holds bytes values of at least {@link GatheringBuffer#MIN_APPEND_BYTES} (a
     * Produce with large batches): the frame is then a {@link GatheringBuffer}, which sends those
     * values from their own buffers instead of copying them into the frame.
     */
    default boolean gathers() {
        return false;
    }
}
