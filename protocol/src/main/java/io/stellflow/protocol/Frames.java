package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Frame limits ({@code docs/spec/wire-protocol.md} §1.2) and helpers to write a length-prefixed
 * frame.
 *
 * <p>A frame is a 4-byte big-endian {@code frameLength} followed by that many payload bytes
 * (header + body). The length does not count itself. Thread-safety: stateless.
 */
public final class Frames {
    /** Largest frameLength in bytes either side may send or accept: 64 MiB minus the 4-byte prefix. */
    public static final int MAX_FRAME_LENGTH = 67_108_860;
    /** Smallest request payload in bytes: the v2 header with all seven strings null, empty body. */
    public static final int MIN_REQUEST_PAYLOAD = 28;
    /** Smallest response payload in bytes: the 12-byte response header. */
    public static final int MIN_RESPONSE_PAYLOAD = ResponseHeader.SIZE;
    /**
     * Payload bytes needed to read apiKey, apiVersion, headerVersion and correlationId. A request
     * payload shorter than this cannot be answered ({@code docs/spec/wire-protocol.md} §1.3).
     */
    public static final int MIN_ANSWERABLE_PAYLOAD = 10;
    /** Size in bytes of the frameLength prefix. */
    public static final int LENGTH_FIELD_SIZE = 4;

    private Frames() {}

    /**
     * Reserves the 4-byte length prefix at {@code out}'s writerIndex and returns its index; write the
     * header and body next, then call {@link #endFrame(ByteBuf, int)}.
     */
    public static int beginFrame(ByteBuf out) {
        int start = out.writerIndex();
        out.writeInt(0);
        return start;
    }

    /**
     * Fills the length prefix reserved by {@link #beginFrame(ByteBuf)} and returns the frameLength.
     *
     * @throws IllegalStateException if the payload exceeds {@link #MAX_FRAME_LENGTH} (a bug in the
     *     caller, which must bound its responses)
     */
    public static int endFrame(ByteBuf out, int frameStart) {
        int frameLength = out.writerIndex() - frameStart - LENGTH_FIELD_SIZE;
        if (frameLength < 0 || frameLength > MAX_FRAME_LENGTH) {
            throw new IllegalStateException("frameLength " + frameLength + " outside 0.." + MAX_FRAME_LENGTH);
        }
        out.setInt(frameStart, frameLength);
        return frameLength;
    }

    /** Writes a whole request frame (length, header, body); returns the frameLength. */
    public static int writeRequest(ByteBuf out, RequestHeader header, BodyWriter body) {
        int start = beginFrame(out);
        header.write(out);
        body.write(out);
        return endFrame(out, start);
    }

    /**
     * Writes a whole successful response frame: header with errorCode 0 and throttleTimeMs 0, then the
     * body ({@code docs/spec/wire-protocol.md} §4.2: errorCode 0 always carries a complete body).
     * Returns the frameLength.
     */
    public static int writeResponse(ByteBuf out, int correlationId, BodyWriter body) {
        int start = beginFrame(out);
        ResponseHeader.of(correlationId, Errors.NONE).write(out);
        body.write(out);
        return endFrame(out, start);
    }

    /**
     * Writes a header-only error response frame ({@code docs/spec/wire-protocol.md} §4.2):
     * frameLength 12, then the header with {@code errorCode} and throttleTimeMs 0. Returns the
     * frameLength (12).
     *
     * @throws IllegalArgumentException if errorCode is NONE (a success needs a body)
     */
    public static int writeErrorResponse(ByteBuf out, int correlationId, short errorCode) {
        if (errorCode == Errors.NONE) {
            throw new IllegalArgumentException("a header-only response needs a non-zero errorCode");
        }
        int start = beginFrame(out);
        ResponseHeader.of(correlationId, errorCode).write(out);
        return endFrame(out, start);
    }
}
