package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt64;

import io.netty.buffer.ByteBuf;

/**
 * InitProducerId response v0 (apiKey 11, {@code docs/spec/wire-protocol.md} §6.12).
 *
 * <pre>
 * errorCode int16 | producerId int64 | producerEpoch int16
 * </pre>
 *
 * Worked example (producer id 1000, epoch 0): {@code 0000 00000000000003e8 0000}; on an error the
 * id and epoch are -1 ({@link #error}).
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record InitProducerIdResponse(short errorCode, long producerId, short producerEpoch) implements ApiMessage {

    /** An error answer: producer id and epoch -1. */
    public static InitProducerIdResponse error(short errorCode) {
        return new InitProducerIdResponse(errorCode, -1L, (short) -1);
    }

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
    }

    public static InitProducerIdResponse read(ByteBuf body) {
        InitProducerIdResponse r = new InitProducerIdResponse(
                readInt16(body, "errorCode"), readInt64(body, "producerId"), readInt16(body, "producerEpoch"));
        ensureFullyRead(body, "InitProducerIdResponse");
        return r;
    }
}
