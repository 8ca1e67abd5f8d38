package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import java.util.List;

/**
 * Splits a connection's inbound byte stream into frame payloads ({@code docs/spec/wire-protocol.md}
 * §1.1: int32 frameLength, then that many bytes), on both ends of the data plane: the broker's
 * request connections ({@link #forRequests}) and the clients' and followers' connections to a
 * broker ({@link #forResponses}). The two differ only in what a frame length the decoder will not
 * assemble does ({@link OversizePolicy}).
 *
 * <ul>
 *   <li>A frame with a length in range becomes a buffer of exactly its payload (without the 4-byte
 *       prefix): a retained slice of the read buffer when the whole frame arrived in it (no copy),
 *       else one pooled direct buffer sized from the length prefix ({@link FrameAssembly}: no growing
 *       cumulation; 1 MiB produce frames and 4 MiB fetch responses arrive in many reads). The rest of
 *       the read that carried the prefix is copied into it; the following reads go straight into it
 *       when the channel's allocator is a {@link FrameReadAllocator} on this decoder ({@link
 *       #readTarget}, no copy), else they are copied once. The next handler owns each payload and
 *       must release it.
 *   <li>Requests ({@link OversizePolicy#DISCARD_AND_ANSWER}, spec §1.3, decision 9.n): a {@code
 *       frameLength} above the limit is skipped as it arrives, without buffering, keeping only the
 *       apiKey and correlationId of its first 10 payload bytes; then an {@link OversizedFrame} is
 *       emitted for the next handler to answer, and the connection stays open. A negative length or
 *       a payload shorter than 10 bytes cannot be answered or resynchronised: the decoder fires an
 *       {@link UnsyncableFrame} user event (the broker logs it), drops everything that follows and
 *       closes the connection.
 *   <li>Responses ({@link OversizePolicy#FAIL}): a length below 0 or above the limit cannot be
 *       resynchronised: the decoder throws {@link CorruptedFrameException}, which fails every pending
 *       request and closes the connection.
 * </ul>
 *
 * <p>Thread-safety: one instance per channel, confined to its event loop.
 */
public final class FrameDecoder extends ByteToMessageDecoder implements FrameReadAllocator.ReadTargets {
    /** What the decoder does with a frame length it will not assemble. */
    public enum OversizePolicy {
        /**
         * Request streams: skip an oversized frame and emit an {@link OversizedFrame} to answer; a
         * payload shorter than {@value Frames#MIN_ANSWERABLE_PAYLOAD} bytes (no correlationId to
         * answer) closes the connection.
         */
        DISCARD_AND_ANSWER(Frames.MIN_ANSWERABLE_PAYLOAD),
        /** Response streams: any length outside {@code [0, limit]} fails the connection. */
        FAIL(0);

        private final int minFrameLength;

        OversizePolicy(int minFrameLength) {
            this.minFrameLength = minFrameLength;
        }
    }

    /**
     * Fired (as a user event, before the connection is closed) by a request decoder that gave up on
     * the stream: a negative {@code frameLength} or one below {@value Frames#MIN_ANSWERABLE_PAYLOAD}.
     *
     * @param frameLength the length prefix read
     */
    public record UnsyncableFrame(int frameLength) {}

    private final OversizePolicy policy;
    private final int maxFrameLength;
    private final FrameAssembly assembly = new FrameAssembly();

    /** Payload bytes of an oversized frame still to skip; 0 when not discarding. */
    private long discardRemaining;

    private int discardFrameLength;
    private boolean discardHeaderSeen;
    private short discardApiKey;
    private int discardCorrelationId;
    private boolean closed;

    private FrameDecoder(OversizePolicy policy, int maxFrameLength) {
        if (maxFrameLength < policy.minFrameLength) {
            throw new IllegalArgumentException("maxFrameLength " + maxFrameLength + " < " + policy.minFrameLength);
        }
        this.policy = policy;
        this.maxFrameLength = maxFrameLength;
    }

    /**
     * A request decoder with the limit of {@code docs/spec/wire-protocol.md} §1.2, {@value
     * Frames#MAX_FRAME_LENGTH} payload bytes.
     */
    public static FrameDecoder forRequests() {
        return forRequests(Frames.MAX_FRAME_LENGTH);
    }

    /** A request decoder with a custom limit (tests use small limits); {@code maxFrameLength >= 10}. */
    public static FrameDecoder forRequests(int maxFrameLength) {
        return new FrameDecoder(OversizePolicy.DISCARD_AND_ANSWER, maxFrameLength);
    }

    /**
     * A response decoder with the limit of {@code docs/spec/wire-protocol.md} §1.2, {@value
     * Frames#MAX_FRAME_LENGTH} payload bytes.
     */
    public static FrameDecoder forResponses() {
        return new FrameDecoder(OversizePolicy.FAIL, Frames.MAX_FRAME_LENGTH);
    }

    /** This decoder's policy. */
    public OversizePolicy policy() {
        return policy;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (closed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (discardRemaining > 0) {
            discard(in, out);
            return;
        }
        if (assembly.inProgress()) {
            ByteBuf payload = assembly.fill(in);
            if (payload != null) {
                out.add(payload);
            }
            return;
        }
        if (in.readableBytes() < Frames.LENGTH_FIELD_SIZE) {
            return;
        }
        int frameLength = in.getInt(in.readerIndex());
        if (frameLength < policy.minFrameLength || (frameLength > maxFrameLength && policy == OversizePolicy.FAIL)) {
            unsyncable(ctx, in, frameLength);
            return;
        }
        in.skipBytes(Frames.LENGTH_FIELD_SIZE);
        if (frameLength > maxFrameLength) {
            discardRemaining = frameLength;
            discardFrameLength = frameLength;
            discardHeaderSeen = false;
            discard(in, out);
            return;
        }
        if (in.readableBytes() >= frameLength) {
            out.add(in.readRetainedSlice(frameLength));
            return;
        }
        // The frame spans reads: collect it in one buffer of its size (the rest of this read now,
        // the following reads as they come), so the cumulation never holds a partial frame.
        assembly.start(ctx.alloc(), frameLength);
        assembly.fill(in);
    }

    private void unsyncable(ChannelHandlerContext ctx, ByteBuf in, int frameLength) {
        closed = true;
        in.skipBytes(in.readableBytes());
        if (policy == OversizePolicy.FAIL) {
            throw new CorruptedFrameException("response frame length " + frameLength + " outside [0, " + maxFrameLength
                    + "] from " + ctx.channel().remoteAddress());
        }
        ctx.fireUserEventTriggered(new UnsyncableFrame(frameLength));
        ctx.close();
    }

    /**
     * The buffer the channel's next read should go into while a frame spanning reads is in
     * progress ({@link FrameAssembly#readTarget}), else null (also while an oversized frame is being
     * skipped or after the stream was given up). Called by {@link FrameReadAllocator}.
     *
     * @return a retained slice of the frame buffer the caller owns, or null
     */
    @Override
    public ByteBuf readTarget() {
        return closed || discardRemaining > 0 ? null : assembly.readTarget();
    }

    /** Payload bytes copied from read buffers into frame buffers on this connection (diagnostics, tests); event loop only. */
    public long copiedPayloadBytes() {
        return assembly.copiedBytes();
    }

    /** Payload bytes read straight into frame buffers on this connection (diagnostics, tests); event loop only. */
    public long inPlacePayloadBytes() {
        return assembly.inPlaceBytes();
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        assembly.release();
    }

    private void discard(ByteBuf in, List<Object> out) {
        if (!discardHeaderSeen) {
            if (in.readableBytes() < Frames.MIN_ANSWERABLE_PAYLOAD) {
                return;
            }
            int start = in.readerIndex();
            discardApiKey = in.getShort(start + RequestHeader.API_KEY_OFFSET);
            discardCorrelationId = in.getInt(start + RequestHeader.CORRELATION_ID_OFFSET);
            discardHeaderSeen = true;
        }
        int skip = (int) Math.min(discardRemaining, in.readableBytes());
        in.skipBytes(skip);
        discardRemaining -= skip;
        if (discardRemaining == 0) {
            out.add(new OversizedFrame(discardApiKey, discardCorrelationId, discardFrameLength));
        }
    }
}
