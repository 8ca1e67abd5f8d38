package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Collects the payload of one length-prefixed frame ({@code docs/spec/wire-protocol.md} §1.1) that
 * arrives over several socket reads into ONE pooled direct buffer sized from the length prefix.
 * Bytes of the read that carried the length prefix are copied once (socket read buffer to frame
 * buffer); the following reads can go straight into the frame buffer with no user-space copy at all
 * ({@link #readTarget}).
 *
 * <p><b>Why.</b> A cumulating decoder (Netty's {@code ByteToMessageDecoder} with its merge
 * cumulator) copies each read into a cumulation buffer that grows by reallocation (copying what it
 * holds again), and once a decoded frame (a retained slice) pins the cumulation, the next read
 * copies the leftover into a fresh one. With 1 MiB produce frames arriving in 64 KiB reads that
 * cumulation was 14% of the broker's CPU in the committed produce flame graph (2026-11-29).
 *
 * <p>Memory bound: payloads up to {@link #MAX_UPFRONT_BYTES} are allocated whole when the length
 * arrives; larger ones start at that size and grow as bytes arrive, so a peer that sends only a
 * length prefix cannot make us reserve a whole maximum-size frame.
 *
 * <p><b>Reading in place.</b> While a payload is in progress, {@link #readTarget} hands out the
 * unwritten tail of the frame buffer (a retained slice, at most the missing bytes, so a read never
 * crosses the frame end). A transport whose receive-buffer allocator returns it makes the kernel
 * write the bytes directly into the frame buffer; when that buffer comes back to {@link #fill} (same
 * object) the bytes are claimed by advancing the frame buffer's writerIndex, without a copy. With 1
 * MiB produce frames the copy this removes was 9.3% of the broker's CPU (profile of 2026-11-29,
 * docs/performance.md). Any other input buffer is copied, so a transport that ignores the target
 * (or a decoder that merged it into a cumulation) still assembles the same bytes.
 *
 * <p>Buffer ownership: {@link #fill} returns the completed payload to the caller, who must release
 * it; a partial payload is owned here until {@link #release}. The input buffer is only read (its
 * readerIndex advances), never released. A buffer returned by {@link #readTarget} belongs to the
 * caller (the transport, then the pipeline), which releases it like any read buffer; releasing it
 * never frees the frame buffer, which this object or the payload's receiver still references.
 * Thread-safety: confined to one channel's event loop.
 */
public final class FrameAssembly {
    /** Payloads up to 8 MiB (producer batches are 256 KiB to 4 MiB, DESIGN §3) are sized exactly up front. */
    public static final int MAX_UPFRONT_BYTES = 8 << 20;

    private ByteBuf payload;
    private int remainingBytes;

    /** The last buffer {@link #readTarget} handed out; compared by identity only, not owned here. */
    private ByteBuf target;

    private long copiedBytes;
    private long inPlaceBytes;

    /** True between {@link #start} and the {@link #fill} that completes the payload. */
    public boolean inProgress() {
        return payload != null;
    }

    /**
     * Starts a payload of {@code payloadBytes} (the frame length, after the 4-byte prefix).
     *
     * @throws IllegalStateException if a payload is already in progress
     * @throws IllegalArgumentException if {@code payloadBytes < 1}
     */
    public void start(ByteBufAllocator alloc, int payloadBytes) {
        if (payload != null) {
            throw new IllegalStateException("a frame of " + remainingBytes + " missing bytes is in progress");
        }
        if (payloadBytes < 1) {
            throw new IllegalArgumentException("payloadBytes must be >= 1: " + payloadBytes);
        }
        payload = alloc.directBuffer(Math.min(payloadBytes, MAX_UPFRONT_BYTES), payloadBytes);
        remainingBytes = payloadBytes;
    }

    /**
     * Moves up to the missing bytes from {@code in} (advancing its readerIndex).
     *
     * @return the complete payload (readerIndex 0, exactly the frame's bytes; the caller owns it), or
     *     null while bytes are missing
     */
    public ByteBuf fill(ByteBuf in) {
        int n = Math.min(remainingBytes, in.readableBytes());
        if (in == target) {
            // The read wrote into the frame buffer at its writerIndex: claim the bytes, no copy.
            target = null;
            if (in.readerIndex() != 0 || n != in.readableBytes()) {
                throw new IllegalStateException("read target reused: readerIndex " + in.readerIndex() + ", "
                        + in.readableBytes() + " bytes for " + remainingBytes + " missing");
            }
            payload.writerIndex(payload.writerIndex() + n);
            in.skipBytes(n);
            inPlaceBytes += n;
        } else {
            target = null;
            payload.writeBytes(in, n);
            copiedBytes += n;
        }
        remainingBytes -= n;
        if (remainingBytes > 0) {
            return null;
        }
        ByteBuf done = payload;
        payload = null;
        return done;
    }

    /**
     * A buffer for the next socket read to write the payload's next bytes into directly: a retained
     * slice of the frame buffer starting at its writerIndex, readerIndex and writerIndex 0, capacity
     * {@code min(missing bytes, room before the frame buffer must grow)}. Pass that buffer itself,
     * after the read, to {@link #fill}; any other call to {@link #fill} or {@link #readTarget}
     * forgets it.
     *
     * @return the target (the caller owns it and must release it), or null when no payload is in
     *     progress or the frame buffer has no room left at its current capacity (payloads above
     *     {@link #MAX_UPFRONT_BYTES}); then read into a buffer of your own and {@link #fill} copies
     */
    public ByteBuf readTarget() {
        target = null;
        if (payload == null) {
            return null;
        }
        int roomBytes = Math.min(remainingBytes, payload.capacity() - payload.writerIndex());
        if (roomBytes <= 0) {
            return null;
        }
        ByteBuf t = payload.retainedSlice(payload.writerIndex(), roomBytes);
        t.clear();
        target = t;
        return t;
    }

    /** Payload bytes {@link #fill} has copied since this object was created (tests, diagnostics). */
    public long copiedBytes() {
        return copiedBytes;
    }

    /** Payload bytes that arrived in a {@link #readTarget} buffer, claimed without a copy. */
    public long inPlaceBytes() {
        return inPlaceBytes;
    }

    /** Bytes still missing from the payload in progress; 0 when none is. */
    public int remainingBytes() {
        return remainingBytes;
    }

    /** Releases a partial payload (connection closed mid-frame); idempotent. */
    public void release() {
        if (payload != null) {
            payload.release();
            payload = null;
            remainingBytes = 0;
            target = null;
        }
    }
}
