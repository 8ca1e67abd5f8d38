package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchLayout;
import org.junit.jupiter.api.Test;

/**
 * {@link LogAppender#continuesLog}, the follower's check; the append itself is covered through
 * {@link UnifiedLog} (UnifiedLogTest, LogSegmentRollTimeTest, FollowerAndTruncationTest).
 */
class LogAppenderTest {
    /** Batches of {@code counts[i]} records at base offsets {@code bases[i]}, as Fetch v0 from {@code fetchOffset}. */
    private static ByteBuf records(long fetchOffset, long[] bases, int[] counts) {
        ByteBuf out = Unpooled.buffer();
        for (int i = 0; i < bases.length; i++) {
            int at = out.writerIndex();
            long[] ts = new long[counts[i]];
            java.util.Arrays.fill(ts, 1000);
            TestBatches.appendBatch(out, ts);
            RecordBatchLayout.setBaseOffsetDelta(out, at, (int) (bases[i] - fetchOffset));
        }
        return out;
    }

    private static boolean continues(ByteBuf r, long fetchOffset, long endOffset, boolean gapsAllowed) {
        try {
            return LogAppender.continuesLog(r, r.readerIndex(), r.writerIndex(), fetchOffset, endOffset, gapsAllowed);
        } finally {
            r.release();
        }
    }

    @Test
    void contiguousBatchesStartingAtTheEndOffsetContinueTheLog() {
        assertThat(continues(records(10, new long[] {10, 12, 15}, new int[] {2, 3, 1}), 10, 10, false))
                .isTrue();
    }

    @Test
    void aFirstBatchAwayFromTheEndOffsetDoesNot() {
        assertThat(continues(records(10, new long[] {10}, new int[] {2}), 10, 9, false))
                .isFalse();
        assertThat(continues(records(10, new long[] {10}, new int[] {2}), 10, 11, false))
                .isFalse();
    }

    @Test
    void aGapOrAnOverlapBetweenBatchesDoesNotUnlessGapsAreAllowed() {
        long[] gap = {10, 13};
        int[] counts = {2, 1};
        assertThat(continues(records(10, gap, counts), 10, 10, false)).isFalse();
        assertThat(continues(records(10, gap, counts), 10, 10, true)).isTrue(); // compacted log
        assertThat(continues(records(10, new long[] {12}, new int[] {1}), 10, 10, true))
                .isTrue();

        long[] overlap = {10, 11};
        assertThat(continues(records(10, overlap, counts), 10, 10, false)).isFalse();
        assertThat(continues(records(10, overlap, counts), 10, 10, true)).isFalse();
        assertThat(continues(records(10, new long[] {10}, new int[] {1}), 10, 11, true))
                .isFalse();
    }
}
