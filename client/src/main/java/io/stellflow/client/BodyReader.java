package io.stellflow.client;

import io.netty.buffer.ByteBuf;

/**
 * Decodes a response body. Runs on the I/O thread; {@code body} is released right after it
 * returns, so the result must not keep references (slices) into it.
 */
@FunctionalInterface
public interface BodyReader<T> {
    T read(ByteBuf body);
}
