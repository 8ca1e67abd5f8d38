package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Frame limits (spec §1.2) and helpers to write a length-prefixed frame.
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
     * payload shorter than this cannot be answered (spec §1.3).
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
}
