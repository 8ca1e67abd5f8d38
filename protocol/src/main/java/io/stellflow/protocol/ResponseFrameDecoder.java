package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import java.util.List;

/**
 * Splits a broker's byte stream into response payloads (used by the client and by a follower's
 * fetcher alike) (spec §1.1: int32 length, then that many
 * bytes): a retained slice of the read buffer when a whole frame arrived in one read, else one
 * pooled direct buffer of exactly the frame's size filled by the following reads ({@link
 * FrameAssembly}; 4 MiB fetch responses arrive in many reads). The rest of the read that carried the
 * length prefix is copied into it; the following reads go straight into it when the channel's
 * receive-buffer allocator is a {@link FrameReadAllocator} on this decoder ({@link #readTarget}, no
 * copy), else they are copied once. The next handler owns each payload and must release it.
 *
 * <p>A length below 0 or above {@value Frames#MAX_FRAME_LENGTH} cannot be resynchronised: the decoder
 * throws {@link CorruptedFrameException}, which fails every pending request and closes the
 * connection. Thread-safety: one instance per channel, confined to its event loop.
 */
public final class ResponseFrameDecoder extends ByteToMessageDecoder implements FrameReadAllocator.ReadTargets {
    private final FrameAssembly assembly = new FrameAssembly();

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
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
        if (frameLength < 0 || frameLength > Frames.MAX_FRAME_LENGTH) {
            in.skipBytes(in.readableBytes());
            throw new CorruptedFrameException("response frame length " + frameLength + " outside [0, "
                    + Frames.MAX_FRAME_LENGTH + "] from " + ctx.channel().remoteAddress());
        }
        in.skipBytes(Frames.LENGTH_FIELD_SIZE);
        if (in.readableBytes() >= frameLength) {
            out.add(in.readRetainedSlice(frameLength));
            return;
        }
        assembly.start(ctx.alloc(), frameLength);
        assembly.fill(in);
    }

    /**
     * The buffer the channel's next read should go into while a frame spanning reads is in
     * progress ({@link FrameAssembly#readTarget}), else null. Called by {@link FrameReadAllocator}.
     *
     * @return a retained slice of the frame buffer the caller owns, or null
     */
    @Override
    public ByteBuf readTarget() {
        return assembly.readTarget();
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
}
