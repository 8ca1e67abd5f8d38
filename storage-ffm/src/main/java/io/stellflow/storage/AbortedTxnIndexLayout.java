package io.stellflow.storage;

import java.nio.ByteBuffer;

/**
 * Binary layout of a segment's aborted-transaction index ({@code <20-digit base offset>.txnindex}):
 * one entry per ABORT marker stored in that segment, in log order, appended when the marker is
 * appended (leader and follower alike) and rebuilt by the producer-state replay after a crash. No
 * file header; a segment without aborted transactions has no file.
 *
 * <pre>
 *  entry (34 bytes, big-endian):
 *   0       2              10             18             26             34
 *  +-------+--------------+--------------+--------------+--------------+
 *  |version|  producerId  | firstOffset  |  lastOffset  |lastStableOff.|
 *  | int16 |    int64     |    int64     |    int64     |    int64     |
 *  +-------+--------------+--------------+--------------+--------------+
 *  version 0; firstOffset = the transaction's BEGIN marker offset; lastOffset = the ABORT marker's
 *  offset (inside this segment); lastStableOffset = the smallest first offset of the transactions
 *  still open after the abort, or lastOffset + 1 when none is (the high watermark is not known
 *  when the log is replayed, so it is not part of it); below firstOffset when an older
 *  transaction is still open.
 * </pre>
 *
 * <p>Worked example: producer 7 began at 100 and aborted at 105 with nothing else open: {@code 0000
 * 0000000000000007 0000000000000064 0000000000000069 000000000000006a}.
 *
 * <p>A file whose length is not a multiple of 34 ends in a torn entry (a crash during its write):
 * the partial bytes are dropped. Thread-safety: stateless.
 */
final class AbortedTxnIndexLayout {
    static final String SUFFIX = ".txnindex";
    static final short VERSION = 0;
    static final int VERSION_OFFSET = 0;
    static final int PRODUCER_ID_OFFSET = 2;
    static final int FIRST_OFFSET_OFFSET = 10;
    static final int LAST_OFFSET_OFFSET = 18;
    static final int LAST_STABLE_OFFSET_OFFSET = 26;
    static final int ENTRY_SIZE = 34;

    private AbortedTxnIndexLayout() {}

    /** Writes {@code t} at {@code b}'s position (advancing it by {@value #ENTRY_SIZE}). */
    static void write(ByteBuffer b, AbortedTxn t) {
        b.putShort(VERSION)
                .putLong(t.producerId())
                .putLong(t.firstOffset())
                .putLong(t.lastOffset())
                .putLong(t.lastStableOffset());
    }

    /** The entry at {@code at}, or null when it is not a valid version-0 entry. */
    static AbortedTxn read(ByteBuffer b, int at) {
        if (b.getShort(at + VERSION_OFFSET) != VERSION) {
            return null;
        }
        long pid = b.getLong(at + PRODUCER_ID_OFFSET);
        long first = b.getLong(at + FIRST_OFFSET_OFFSET);
        long last = b.getLong(at + LAST_OFFSET_OFFSET);
        long lso = b.getLong(at + LAST_STABLE_OFFSET_OFFSET);
        if (pid < 0 || first < 0 || last < first || lso < 0 || lso > last + 1) {
            return null;
        }
        return new AbortedTxn(pid, first, last, lso);
    }
}
