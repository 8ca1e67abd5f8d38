package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.stellflow.protocol.FrameAssembly;
import io.stellflow.protocol.FrameReadAllocator;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Splits the inbound byte stream into request payloads (spec §1.1-1.3, decision 9.n).
 *
 * <ul>
 *   <li>A frame with {@code 10 <= frameLength <= maxFrameLength} becomes a buffer of exactly its
 *       payload (header + body, without the 4-byte prefix): a retained slice of the read buffer when
 *       the whole frame arrived in it (no copy), else a pooled direct buffer sized from the length
 *       prefix ({@link FrameAssembly}: no growing cumulation). The rest of the read that carried the
 *       prefix is copied into it; the following reads are read straight into it when the channel's
 *       allocator is a {@link FrameReadAllocator} on this decoder ({@link #readTarget}, no copy),
 *       else copied. The next handler owns the payload and must release it.
 *   <li>{@code frameLength > maxFrameLength}: the decoder keeps the first 10 payload bytes' worth of
 *       information (apiKey, correlationId), skips the rest as it arrives without buffering it, and
 *       then emits an {@link OversizedFrame}. The connection stays open.
 *   <li>A negative {@code frameLength} or a payload shorter than 10 bytes: the stream cannot be
 *       answered or resynchronised, so the decoder logs a WARN line and closes the connection.
 * </ul>
 *
 * <p>Thread-safety: one instance per channel, confined to its event loop.
 */
public final class FrameDecoder extends ByteToMessageDecoder implements FrameReadAllocator.ReadTargets {
    private static final Logger LOG = LoggerFactory.getLogger(FrameDecoder.class);

    private final int maxFrameLength;

    /** Payload bytes of an oversized frame still to skip; 0 when not discarding. */
    private long discardRemaining;

    private int discardFrameLength;
    private boolean discardHeaderSeen;
    private short discardApiKey;
    private int discardCorrelationId;
    private boolean closed;
    private final FrameAssembly assembly = new FrameAssembly();

    /** A decoder with the spec's limit of {@value Frames#MAX_FRAME_LENGTH} payload bytes. */
    public FrameDecoder() {
        this(Frames.MAX_FRAME_LENGTH);
    }

    /** A decoder with a custom limit (tests use small limits); {@code maxFrameLength >= 10}. */
    public FrameDecoder(int maxFrameLength) {
        if (maxFrameLength < Frames.MIN_ANSWERABLE_PAYLOAD) {
            throw new IllegalArgumentException("maxFrameLength " + maxFrameLength + " < 10");
        }
        this.maxFrameLength = maxFrameLength;
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
        if (frameLength < Frames.MIN_ANSWERABLE_PAYLOAD) {
            LOG.warn(
                    "Closing connection from {}: frameLength {} (negative or below 10 bytes), cannot stay in sync",
                    ctx.channel().remoteAddress(),
                    frameLength);
            closed = true;
            in.skipBytes(in.readableBytes());
            ctx.close();
            return;
        }
        if (frameLength > maxFrameLength) {
            in.skipBytes(Frames.LENGTH_FIELD_SIZE);
            discardRemaining = frameLength;
            discardFrameLength = frameLength;
            discardHeaderSeen = false;
            discard(in, out);
            return;
        }
        in.skipBytes(Frames.LENGTH_FIELD_SIZE);
        if (in.readableBytes() >= frameLength) {
            out.add(in.readRetainedSlice(frameLength));
            return;
        }
        // The frame spans reads: collect it in one buffer of its size (the rest of this read now,
        // the following reads as they come), so the cumulation never holds a partial frame.
        assembly.start(ctx.alloc(), frameLength);
        assembly.fill(in);
    }

    /**
     * The buffer the channel's next read should go into while a frame spanning reads is in
     * progress ({@link FrameAssembly#readTarget}), else null (also while an oversized frame is being
     * skipped or after the connection was given up). Called by {@link FrameReadAllocator}.
     *
     * @return a retained slice of the frame buffer the caller owns, or null
     */
    @Override
    public ByteBuf readTarget() {
        return closed || discardRemaining > 0 ? null : assembly.readTarget();
    }

    /** Payload bytes copied from read buffers into frame buffers on this connection (tests). */
    public long copiedPayloadBytes() {
        return assembly.copiedBytes();
    }

    /** Payload bytes that were read straight into frame buffers on this connection (tests). */
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
