package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Something that appends one API body ({@code docs/spec/wire-protocol.md} §6) to a buffer: no
 * header, no frame length. The frame writers of {@link Frames} take it, so that the framing layer
 * does not depend on the message package; every message body ({@link
 * io.stellflow.protocol.message.ApiMessage}) is one.
 *
 * <p>Thread-safety: as the implementation's.
 */
@FunctionalInterface
public interface BodyWriter {
    /** Appends the body at {@code out}'s writerIndex and advances it by the body's size in bytes. */
    void write(ByteBuf out);
}
