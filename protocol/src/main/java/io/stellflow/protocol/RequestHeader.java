package io.stellflow.protocol;

import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt8;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * Request header, headerVersion 2 ({@code docs/spec/wire-protocol.md} §3): fourteen fields in fixed
 * order, 28 bytes when all seven strings are null. Only apiKey, apiVersion, headerVersion and
 * correlationId sit at fixed payload offsets (0, 2, 4, 6).
 *
 * <p>Immutable and thread-safe. {@link #read} is strict: it throws {@link ProtocolException} with
 * {@link Errors#UNSUPPORTED_VERSION} when headerVersion is not 2 and {@link Errors#INVALID_REQUEST}
 * for a short header, a bad string or a trafficClass outside 0..3. flags are carried but no bit is
 * defined in v0.
 */
public record RequestHeader(
        short apiKey,
        short apiVersion,
        short headerVersion,
        int correlationId,
        String clientId,
        String traceId,
        String spanId,
        byte traceFlags,
        String tenantId,
        String quotaKey,
        String authContextId,
        byte trafficClass,
        String trafficTag,
        short flags) {

    /** The only header version of v0. */
    public static final short HEADER_VERSION = 2;
    /** Payload offset of apiKey. */
    public static final int API_KEY_OFFSET = 0;
    /** Payload offset of apiVersion. */
    public static final int API_VERSION_OFFSET = 2;
    /** Payload offset of headerVersion. */
    public static final int HEADER_VERSION_OFFSET = 4;
    /** Payload offset of correlationId. */
    public static final int CORRELATION_ID_OFFSET = 6;
    /** trafficClass values: 0 baseline business, 1 canary/gray, 2 background, 3 control. */
    public static final byte TRAFFIC_CLASS_BASELINE = 0;

    public static final byte TRAFFIC_CLASS_CANARY = 1;
    public static final byte TRAFFIC_CLASS_BACKGROUND = 2;
    public static final byte TRAFFIC_CLASS_CONTROL = 3;

    /** A header as the SDKs send it: headerVersion 2, every other string null, zero flags and class. */
    public static RequestHeader of(short apiKey, short apiVersion, int correlationId, String clientId) {
        return new RequestHeader(
                apiKey,
                apiVersion,
                HEADER_VERSION,
                correlationId,
                clientId,
                null,
                null,
                (byte) 0,
                null,
                null,
                null,
                TRAFFIC_CLASS_BASELINE,
                null,
                (short) 0);
    }

    /** Appends the header at {@code out}'s writerIndex. */
    public void write(ByteBuf out) {
        out.writeShort(apiKey);
        out.writeShort(apiVersion);
        out.writeShort(headerVersion);
        out.writeInt(correlationId);
        writeNullableString(out, clientId);
        writeNullableString(out, traceId);
        writeNullableString(out, spanId);
        out.writeByte(traceFlags);
        writeNullableString(out, tenantId);
        writeNullableString(out, quotaKey);
        writeNullableString(out, authContextId);
        out.writeByte(trafficClass);
        writeNullableString(out, trafficTag);
        out.writeShort(flags);
    }

    /**
     * Reads from the payload start (after frameLength), leaving readerIndex at the body. Throws
     * ProtocolException with UNSUPPORTED_VERSION when headerVersion != 2, INVALID_REQUEST for bad
     * strings, a short header or trafficClass not in 0..3.
     */
    public static RequestHeader read(ByteBuf payload) {
        short apiKey = readInt16(payload, "apiKey");
        short apiVersion = readInt16(payload, "apiVersion");
        short headerVersion = readInt16(payload, "headerVersion");
        if (headerVersion != HEADER_VERSION) {
            throw new ProtocolException(
                    Errors.UNSUPPORTED_VERSION, "headerVersion " + headerVersion + " is not " + HEADER_VERSION);
        }
        int correlationId = readInt32(payload, "correlationId");
        String clientId = readNullableString(payload, "clientId");
        String traceId = readNullableString(payload, "traceId");
        String spanId = readNullableString(payload, "spanId");
        byte traceFlags = readInt8(payload, "traceFlags");
        String tenantId = readNullableString(payload, "tenantId");
        String quotaKey = readNullableString(payload, "quotaKey");
        String authContextId = readNullableString(payload, "authContextId");
        byte trafficClass = readInt8(payload, "trafficClass");
        if (trafficClass < TRAFFIC_CLASS_BASELINE || trafficClass > TRAFFIC_CLASS_CONTROL) {
            throw new ProtocolException(Errors.INVALID_REQUEST, "trafficClass " + trafficClass + " not in 0..3");
        }
        String trafficTag = readNullableString(payload, "trafficTag");
        short flags = readInt16(payload, "flags");
        return new RequestHeader(
                apiKey,
                apiVersion,
                headerVersion,
                correlationId,
                clientId,
                traceId,
                spanId,
                traceFlags,
                tenantId,
                quotaKey,
                authContextId,
                trafficClass,
                trafficTag,
                flags);
    }

    /**
     * The correlationId at payload offset 6 without consuming; for answering unreadable headers.
     *
     * @throws ProtocolException INVALID_REQUEST when fewer than 10 payload bytes are readable (the
     *     broker then cannot answer and closes the connection, {@code docs/spec/wire-protocol.md}
     *     §1.3)
     */
    public static int peekCorrelationId(ByteBuf payload) {
        if (payload.readableBytes() < Frames.MIN_ANSWERABLE_PAYLOAD) {
            throw new ProtocolException(
                    Errors.INVALID_REQUEST, "payload of " + payload.readableBytes() + " bytes has no correlationId");
        }
        return payload.getInt(payload.readerIndex() + CORRELATION_ID_OFFSET);
    }

    /** The apiKey at payload offset 0 without consuming; needs 2 readable bytes. */
    public static short peekApiKey(ByteBuf payload) {
        WireReader.require(payload, 2, "apiKey");
        return payload.getShort(payload.readerIndex() + API_KEY_OFFSET);
    }
}
