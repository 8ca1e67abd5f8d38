package io.stellflow.broker.fetch;

import io.netty.channel.DefaultFileRegion;
import java.nio.channels.FileChannel;

/**
 * A {@link DefaultFileRegion} over part of a log segment's file that BORROWS the segment's
 * {@link FileChannel}: releasing the region never closes the channel (a plain {@code
 * DefaultFileRegion} closes its file on deallocation, which would close the live segment).
 *
 * <p>Being a {@code DefaultFileRegion}, it takes each transport's zero-copy path: NIO uses
 * {@code FileChannel.transferTo} (sendfile), epoll calls {@code sendfile(2)} on the channel's file
 * descriptor, io_uring splices file -> pipe -> socket when the kernel supports {@code
 * IORING_OP_SPLICE} (otherwise Netty 4.2 copies the region through a direct chunk buffer, never a
 * heap buffer; {@link io.stellflow.broker.StellflowServer} logs which at start).
 *
 * <p>Ownership rule (who may close the channel under an in-flight region): the channel belongs to
 * the {@code UnifiedLog}'s segment. The log closes it only (a) on {@code close()}, which the
 * broker calls after it has closed every connection (closing a connection fails and releases its
 * queued regions first), and (b) {@code log.segment.delete.delay.ms} (default 60 s) after
 * retention or truncation removed the segment from the log. A region still queued on a socket that
 * long afterwards fails its write with {@code ClosedChannelException} (the closed channel's file
 * descriptor is -1, so no other file is ever sent), the connection closes, and the client fetches
 * again. Regions queue behind at most the channel's write-buffer high water mark, so in practice
 * they are written within milliseconds.
 *
 * <p>Thread-safety: as {@code DefaultFileRegion}: created on a request thread, then written and
 * released on the channel's event loop.
 */
public final class SegmentFileRegion extends DefaultFileRegion {
    /**
     * @param segmentChannel the segment's channel (borrowed, never closed here)
     * @param position first byte in the file
     * @param count bytes to send
     */
    public SegmentFileRegion(FileChannel segmentChannel, long position, long count) {
        super(segmentChannel, position, count);
    }

    @Override
    protected void deallocate() {
        // The segment owns the channel: nothing to close here.
    }
}
