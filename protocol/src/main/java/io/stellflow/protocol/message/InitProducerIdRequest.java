package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * InitProducerId request v0 (apiKey 11, {@code docs/spec/wire-protocol.md} §6.12) and v1 (ours,
 * {@code docs/protocol-additions.md}: appends the producer's {@code transaction.timeout.ms}).
 *
 * <pre>
 * transactionalId nullable string
 * v1: | transactionTimeoutMs int32   -1 = the broker's transaction.default.timeout.ms
 * </pre>
 *
 * Worked example (an idempotent producer, null transactionalId): {@code ffff}; v1 for id "tx" with a
 * 30000 ms timeout: {@code 0002 7478 00007530}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param transactionalId null for an idempotent producer; non-null for a transactional one
 * @param transactionTimeoutMs v1: the transaction timeout in ms the producer asks for (the broker
 *     refuses one above {@code transaction.max.timeout.ms} or below 1 with INVALID_REQUEST); -1 in v0
 */
public record InitProducerIdRequest(String transactionalId, int transactionTimeoutMs) implements ApiMessage {
    /** The version that carries {@link #transactionTimeoutMs}. */
    public static final short VERSION_WITH_TIMEOUT = 1;

    /** A v0 request: the broker's default timeout. */
    public InitProducerIdRequest(String transactionalId) {
        this(transactionalId, -1);
    }

    /** Writes the v0 layout. */
    @Override
    public void write(ByteBuf out) {
        write(out, (short) 0);
    }

    /** Writes the layout of {@code version} (0 or 1). */
    public void write(ByteBuf out, short version) {
        writeNullableString(out, transactionalId);
        if (version >= VERSION_WITH_TIMEOUT) {
            out.writeInt(transactionTimeoutMs);
        }
    }

    /** Reads a v0 request. */
    public static InitProducerIdRequest read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /** Reads a request of {@code version} (0 or 1). */
    public static InitProducerIdRequest read(ByteBuf body, short version) {
        String id = readNullableString(body, "transactionalId");
        int timeoutMs = version >= VERSION_WITH_TIMEOUT ? readInt32(body, "transactionTimeoutMs") : -1;
        ensureFullyRead(body, "InitProducerIdRequest");
        return new InitProducerIdRequest(id, timeoutMs);
    }
}
