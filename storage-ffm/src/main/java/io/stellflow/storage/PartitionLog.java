package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * One partition's log.
 *
 * <p>Thread-safety: all methods may be called from any thread; appends are serialized by the log
 * (single writer at a time); reads run concurrently with appends and only see fully written batches.
 */
public final class PartitionLog implements AutoCloseable {

    private PartitionLog() {}

    /** Opens (creating if needed) or recovers the log in {@code partitionDir}. */
    public static PartitionLog open(Path partitionDir, LogConfig config) throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * {@code records} = a VALIDATED RecordBatchSet (readerIndex..writerIndex). Assigns consecutive
     * offsets from LEO to every record of every batch, stamps partitionLeaderEpoch, writes all
     * batches. Returns the base offset (offset of the first record). Does not release {@code
     * records}. IOException = the write failed; nothing is acknowledged.
     */
    public long appendAsLeader(ByteBuf records, int leaderEpoch) throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Visits whole batches whose last offset &gt;= fetchOffset, in order, while their last offset &lt;
     * maxOffsetExclusive, stopping before a batch that would exceed maxBytes, except the first batch
     * when minOneBatch. Returns bytes visited.
     */
    public int read(long fetchOffset, int maxBytes, long maxOffsetExclusive, boolean minOneBatch, BatchVisitor visitor)
            throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    /** Receives whole stored batches from {@link #read}. */
    public interface BatchVisitor {
        void batch(FileChannel channel, long filePosition, int sizeInBytes, long baseOffset, long lastOffset)
                throws IOException;
    }

    /**
     * Convenience: copies what read() visits into {@code out}, rewriting each batch's bytes 0-3
     * (baseOffsetDelta) to (baseOffset - fetchOffset) as Fetch v0 requires. Returns bytes copied.
     */
    public int readInto(long fetchOffset, int maxBytes, long maxOffsetExclusive, boolean minOneBatch, ByteBuf out)
            throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    /** First record (record granularity) with timestamp &gt;= targetMs and offset &lt; maxOffsetExclusive, or null. */
    public TimestampOffset offsetForTimestamp(long targetMs, long maxOffsetExclusive) throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    /** A record's timestamp and offset. */
    public record TimestampOffset(long timestampMs, long offset) {}

    public long logEndOffset() {
        throw new UnsupportedOperationException("not yet");
    }

    public long logStartOffset() {
        throw new UnsupportedOperationException("not yet");
    }

    /** The epoch of the last appended batch, -1 if none. */
    public int latestLeaderEpoch() {
        throw new UnsupportedOperationException("not yet");
    }

    public void flush() throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    /** Clean shutdown. */
    @Override
    public void close() throws IOException {
        throw new UnsupportedOperationException("not yet");
    }
}
