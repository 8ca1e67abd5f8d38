package io.stellflow.client;

import io.netty.buffer.ByteBuf;

/** Writes a request body (no header, no frame length) into {@code out}. Message records' {@code write} fits. */
@FunctionalInterface
public interface BodyWriter {
    void write(ByteBuf out);
}
