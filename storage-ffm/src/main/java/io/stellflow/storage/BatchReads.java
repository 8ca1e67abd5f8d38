package io.stellflow.storage;

import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The batch walk behind {@link PartitionLog#read}: finds the segment and, through its offset index,
 * the position to start from, then walks batch headers and hands whole batches to the visitor.
 *
 * <p>Thread-safety: stateless; runs concurrently with appends on the segments array and the upper
 * bound the caller read (the upper bound first, then the segments).
 */
final class BatchReads {
    private BatchReads() {}

    /** See {@link PartitionLog#read}; {@code upper} is already min(maxOffsetExclusive, LEO). */
    static int visit(
            Segment[] segs,
            long fetchOffset,
            int maxBytes,
            long upper,
            boolean minOneBatch,
            PartitionLog.BatchVisitor visitor)
            throws IOException {
        if (fetchOffset >= upper) {
            return 0;
        }
        ByteBuffer hdr = ByteBuffer.allocate(LogLoader.WALK_HEADER_BYTES);
        int visited = 0;
        boolean first = true;
        for (int i = floorSegment(segs, fetchOffset); i < segs.length; i++) {
            Segment s = segs[i];
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
                    visitor.batch(s.log, pos, size, base, last);
                    visited += size;
                    first = false;
                }
                pos += size;
            }
        }
        return visited;
    }

    private static int floorSegment(Segment[] segs, long offset) {
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
}
