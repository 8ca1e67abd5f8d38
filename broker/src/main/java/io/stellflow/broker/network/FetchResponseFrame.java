package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import io.stellflow.protocol.Frames;
import java.util.Arrays;

/**
 * A whole Fetch response frame as one outbound message: a small {@code head} buffer holding every
 * byte that is not log data (length prefix, response header, topic and partition fields, and for
 * Fetch v0 the 4-byte baseOffsetDelta of each batch), and the {@link FileRegion}s of log data
 * spliced into it at byte positions of the head ({@code cuts}). On the wire the frame is {@code
 * head[0, cut0) region0 head[cut0, cut1) region1 ... head[cutN-1, end)}.
 * {@link FetchResponseWriter} writes the pieces back to back on the event loop.
 *
 * <p>In copy mode there are no regions: the head holds the whole frame.
 *
 * <p>Buffer ownership: the frame owns {@code head} and every region (refCnt 1 each). Whoever holds
 * the frame releases it once: {@link io.stellflow.broker.network.RequestContext#sendFetch} hands it
 * to the channel (Netty releases it, also when the channel is closed), otherwise the evaluator calls
 * {@link #release()}. {@link FetchResponseWriter} retains what it writes before it releases the
 * frame.
 *
 * <p>Thread-safety: built by one thread, then handed over; not shared.
 */
public final class FetchResponseFrame extends AbstractReferenceCounted {
    private final ByteBuf head;
    private int[] cuts = new int[4];
    private FileRegion[] regions = new FileRegion[4];
    private int regionCount;
    private long regionBytes;

    /** @param head the frame buffer, started with a length placeholder at its readerIndex */
    public FetchResponseFrame(ByteBuf head) {
        this.head = head;
    }

    /** The non-region bytes; append fields here. */
    public ByteBuf head() {
        return head;
    }

    /** Splices {@code region} in at the head's current writerIndex; takes ownership of it. */
    public void addRegion(FileRegion region) {
        if (regionCount == regions.length) {
            regions = Arrays.copyOf(regions, regionCount * 2);
            cuts = Arrays.copyOf(cuts, regionCount * 2);
        }
        cuts[regionCount] = head.writerIndex();
        regions[regionCount++] = region;
        regionBytes += region.count();
    }

    /** Number of regions so far (a rollback mark for {@link #truncate}). */
    public int regionCount() {
        return regionCount;
    }

    /** Drops (and releases) the regions added after mark {@code regionCount} and rewinds the head. */
    public void truncate(int regionMark, int headWriterIndex) {
        for (int i = regionMark; i < regionCount; i++) {
            regionBytes -= regions[i].count();
            regions[i].release();
            regions[i] = null;
        }
        regionCount = regionMark;
        head.writerIndex(headWriterIndex);
    }

    /** Bytes after the 4-byte length prefix: head bytes plus region bytes. */
    public long payloadBytes() {
        return head.readableBytes() - Frames.LENGTH_FIELD_SIZE + regionBytes;
    }

    /** Log bytes in the regions (sent from the files, not held in memory). */
    public long regionBytes() {
        return regionBytes;
    }

    /** Writes the payload size into the length prefix; false when it exceeds the frame limit. */
    public boolean seal() {
        long payload = payloadBytes();
        if (payload > Frames.MAX_FRAME_LENGTH) {
            return false;
        }
        head.setInt(head.readerIndex(), (int) payload);
        return true;
    }

    int cut(int i) {
        return cuts[i];
    }

    FileRegion region(int i) {
        return regions[i];
    }

    @Override
    protected void deallocate() {
        head.release();
        for (int i = 0; i < regionCount; i++) {
            regions[i].release();
            regions[i] = null;
        }
    }

    @Override
    public FetchResponseFrame touch(Object hint) {
        head.touch(hint);
        return this;
    }
}
