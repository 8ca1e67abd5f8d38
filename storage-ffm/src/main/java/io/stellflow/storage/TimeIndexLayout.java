package io.stellflow.storage;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Binary layout of a segment's sparse time index ({@code <20-digit base offset>.timeindex}).
 *
 * <p>The file is an array of fixed 12-byte entries. Entry {@code (T, r)} says: the largest record
 * timestamp in the segment up to that point is {@code T}, and it was first reached by the batch
 * whose base offset is {@code segmentBase + r}. Record timestamps, not the batch headers'
 * {@code maxTimestamp}: the public SDKs set that equal to {@code baseTimestamp} (decision 9.s of
 * {@code docs/spec/wire-protocol.md}), so the append takes each batch's maximum from its records. Hence every record before that batch has a
 * timestamp &lt; T, which is what a lookup needs: for a target {@code t}, the last entry with
 * {@code T <= t} gives a batch before which no record can match, so the search starts there.
 * Timestamps and relative offsets both strictly increase from entry to entry.
 *
 * <pre>
 *  entry n (at file offset n * 12), big-endian:
 *   0                               8               12
 *  +-------------------------------+---------------+
 *  |          timestampMs          | relativeOffset|
 *  |            int64              |    int32      |
 *  +-------------------------------+---------------+
 *  timestampMs    = max record timestamp so far (ms since the epoch, &gt;= 0)
 *  relativeOffset = base offset of the batch that first reached it - segment base offset
 * </pre>
 *
 * <p>Worked example: segment {@code 00000000000000001000.timeindex}, the batch with base offset 1042
 * raised the segment's max timestamp to 1,700,000,000,000 ms (0x18B_CFE5_6800): the entry is
 * {@code 00 00 01 8b cf e5 68 00 00 00 00 2a}.
 *
 * <p>When entries are written: together with an offset index entry (one per {@code
 * log.index.interval.bytes}) if the max timestamp grew since the last time entry, and once more when
 * the segment rolls or closes, so that the last entry of a sealed segment holds the segment's max
 * timestamp (used by retention). The file is therefore sized for one entry more than the offset
 * index ({@link #maxBytesFor}). The active segment's file is preallocated (zeros after the last
 * entry) and trimmed on roll and clean close; a file whose entries are not strictly increasing (a
 * zero-filled tail never is) or whose last entry does not match the log is rebuilt from the log.
 */
public final class TimeIndexLayout {
    /** Size of one entry in bytes. */
    public static final int ENTRY_SIZE = 12;
    /** Byte offset of timestampMs within an entry. */
    public static final int TIMESTAMP_OFFSET = 0;
    /** Byte offset of relativeOffset within an entry. */
    public static final int RELATIVE_OFFSET_OFFSET = 8;
    /** Big-endian int64 at any alignment. */
    public static final ValueLayout.OfLong LONG_BE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** Big-endian int32 at any alignment. */
    public static final ValueLayout.OfInt INT_BE = OffsetIndexLayout.INT_BE;

    private TimeIndexLayout() {}

    /** File offset of entry {@code n}. */
    public static long entryOffset(int n) {
        return (long) n * ENTRY_SIZE;
    }

    /** Entries of a time index paired with an offset index of {@code offsetIndexMaxBytes}: one more. */
    public static int maxEntriesFor(int offsetIndexMaxBytes) {
        return offsetIndexMaxBytes / OffsetIndexLayout.ENTRY_SIZE + 1;
    }

    /** Preallocated size in bytes of such a time index. */
    public static long maxBytesFor(int offsetIndexMaxBytes) {
        return (long) maxEntriesFor(offsetIndexMaxBytes) * ENTRY_SIZE;
    }
}
