package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The batch walk behind {@link UnifiedLog#read}: finds the segment and, through its offset index,
 * the position to start from, then walks batch headers and hands whole batches to the visitor.
 *
 * <p>Thread-safety: stateless; runs concurrently with appends on the segments array and the upper
 * bound the caller read (the upper bound first, then the segments).
 */
final class BatchReads {
    private BatchReads() {}

    /** See {@link UnifiedLog#read}; {@code upper} is already min(maxOffsetExclusive, LEO). */
    static int visit(
            LogSegment[] segs, long fetchOffset, int maxBytes, long upper, boolean minOneBatch, BatchVisitor visitor)
            throws IOException {
        if (fetchOffset >= upper) {
            return 0;
        }
        ByteBuffer hdr = ByteBuffer.allocate(LogLoader.WALK_HEADER_BYTES);
        int visited = 0;
        boolean first = true;
        for (int i = floorSegment(segs, fetchOffset); i < segs.length; i++) {
            LogSegment s = segs[i];
            int end = s.sizeBytes();
            int pos = s.lookup(fetchOffset);
            while (pos < end) {
                hdr.clear();
                s.readFully(hdr, pos);
                int size = RecordBatchLayout.LOG_OVERHEAD + hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
                long base = s.baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
                long last = base + hdr.getInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
                if (last >= fetchOffset) {
                    if (last >= upper) {
                        return visited;
                    }
                    if ((long) visited + size > maxBytes && !(first && minOneBatch)) {
                        return visited;
                    }
                    visitor.batch(s.log, pos, size, base, last, hdr.getShort(RecordBatchLayout.ATTRIBUTES_OFFSET));
                    visited += size;
                    first = false;
                }
                pos += size;
            }
        }
        return visited;
    }

    private static int floorSegment(LogSegment[] segs, long offset) {
        int lo = 0;
        int hi = segs.length - 1;
        int found = 0;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (segs[mid].baseOffset <= offset) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /**
     * A visitor copying each batch into {@code out} (at its writerIndex, growing it) with bytes 0-3
     * rewritten to {@code baseOffset - fetchOffset} (Fetch v0, {@code docs/spec/wire-protocol.md}
     * §6.4 step 5); {@link UnifiedLog#readInto}.
     */
    static BatchVisitor copyingInto(ByteBuf out, long fetchOffset) {
        return (ch, position, size, base, last) -> {
            int at = out.writerIndex();
            out.ensureWritable(size);
            int copied = 0;
            while (copied < size) {
                int n = out.writeBytes(ch, position + copied, size - copied);
                if (n < 0) {
                    throw new IOException("unexpected end of segment file at " + (position + copied));
                }
                copied += n;
            }
            out.setInt(at + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET, Math.toIntExact(base - fetchOffset));
        };
    }
}
