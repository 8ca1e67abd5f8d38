package io.stellflow.protocol.message;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.BodyWriter;

/**
 * A v0 request or response body ({@code docs/spec/wire-protocol.md} §6). {@link #write} appends the
 * body only: no header, no frame length. Every implementation also has a strict {@code static X
 * read(ByteBuf body)} that consumes the whole body and throws {@link
 * io.stellflow.protocol.ProtocolException}.
 *
 * <p>Implementations are immutable records and thread-safe, except that a record holding a
 * {@code ByteBuf} shares that buffer (see the record's javadoc for ownership).
 */
public interface ApiMessage extends BodyWriter {
    /** Appends the body at {@code out}'s writerIndex. */
    @Override
    void write(ByteBuf out);
}
