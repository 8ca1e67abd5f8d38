package io.stellflow.storage;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Binary layout of a segment's sparse offset index ({@code <20-digit base offset>.index}).
 *
 * <p>The file is an array of fixed 8-byte entries, sorted by relative offset and by position, both
 * strictly increasing. Each entry maps the base offset of one batch to the byte position of that
 * batch in the segment's {@code .log}. One entry is added per {@code log.index.interval.bytes} of
 * appended batches, so a lookup scans at most about that many bytes of the log after the binary
 * search.
 *
 * <pre>
 *  entry n (at file offset n * 8), big-endian:
 *   0               4               8
 *  +---------------+---------------+
 *  | relativeOffset|   position    |
 *  |    int32      |    int32      |
 *  +---------------+---------------+
 *  relativeOffset = batch base offset - segment base offset (0 .. Integer.MAX_VALUE)
 *  position       = byte position of the batch in the .log (0 .. Integer.MAX_VALUE)
 * </pre>
 *
 * <p>Worked example: segment {@code 00000000000000001000.index}, a batch with base offset 1042 at
 * log position 8192 is stored as {@code 00 00 00 2a 00 00 20 00} (42, 8192).
 *
 * <p>The active segment's file is preallocated to {@code log.index.size.max.bytes} (zeros after the
 * last entry) and trimmed to {@code entries * 8} on roll and clean close. The index is never trusted
 * after an unclean shutdown: it is rebuilt from the log.
 */
public final class OffsetIndexLayout {
    /** Size of one entry in bytes. */
    public static final int ENTRY_SIZE = 8;
    /** Byte offset of relativeOffset within an entry. */
    public static final int RELATIVE_OFFSET_OFFSET = 0;
    /** Byte offset of position within an entry. */
    public static final int POSITION_OFFSET = 4;
    /** The only value layout used to access index files: a big-endian int32 at any alignment. */
    public static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private OffsetIndexLayout() {}

    /** File offset of entry {@code n}. */
    public static long entryOffset(int n) {
        return (long) n * ENTRY_SIZE;
    }
}
