package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * InitProducerId request v0 (apiKey 11, {@code docs/spec/wire-protocol.md} §6.12).
 *
 * <pre>
 * transactionalId nullable string
 * </pre>
 *
 * Worked example (an idempotent producer, null transactionalId): {@code ffff}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param transactionalId null for an idempotent producer; non-null for a transactional one
 */
public record InitProducerIdRequest(String transactionalId) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        writeNullableString(out, transactionalId);
    }

    public static InitProducerIdRequest read(ByteBuf body) {
        InitProducerIdRequest r = new InitProducerIdRequest(readNullableString(body, "transactionalId"));
        ensureFullyRead(body, "InitProducerIdRequest");
        return r;
    }
}
