package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The segment list on its own: lookup, roll, truncation, retention and swap replacements. */
class LogSegmentsTest {
    private static final LogConfig CONFIG = LogConfig.defaults();

    @TempDir
    Path dir;

    private final List<LogSegment> opened = new ArrayList<>();

    @AfterEach
    void closeSegments() throws IOException {
        for (LogSegment s : opened) {
            s.abandon();
        }
    }

    private LogSegment segment(long baseOffset) throws IOException {
        LogSegment s = LogSegment.create(dir, baseOffset, CONFIG, 0);
        opened.add(s);
        return s;
    }

    /** Segments at base offsets 0, 10, 20 (the last one active), end offset 25. */
    private LogSegments three() throws IOException {
        return new LogSegments(new LogSegment[] {segment(0), segment(10), segment(20)}, 0, 25, 3);
    }

    @Test
    void aLogHasAtLeastOneSegment() {
        assertThatThrownBy(() -> new LogSegments(new LogSegment[0], 0, 0, -1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void floorIndexFindsTheSegmentThatWouldHoldAnOffset() throws IOException {
        LogSegments segs = three();
        assertThat(segs.floorIndex(-1)).isEqualTo(-1);
        assertThat(segs.floorIndex(0)).isZero();
        assertThat(segs.floorIndex(9)).isZero();
        assertThat(segs.floorIndex(10)).isEqualTo(1);
        assertThat(segs.floorIndex(19)).isEqualTo(1);
        assertThat(segs.floorIndex(20)).isEqualTo(2);
        assertThat(segs.floorIndex(Long.MAX_VALUE)).isEqualTo(2); // past the end: the active segment
        assertThat(new LogSegments(new LogSegment[] {segment(100)}, 100, 100, -1).floorIndex(99))
                .isEqualTo(-1);
    }

    @Test
    void rollSealsTheActiveSegmentAndPublishesANewOneBeforeItsEndOffset() throws IOException {
        LogSegments segs = three();
        LogSegment before = segs.active();
        LogSegment next = segs.roll(dir, 25, CONFIG, 0);
        opened.add(next);
        assertThat(segs.count()).isEqualTo(4);
        assertThat(segs.active()).isSameAs(next).isNotSameAs(before);
        assertThat(next.baseOffset).isEqualTo(25);
        assertThat(segs.endOffset()).isEqualTo(25); // nothing appended to it yet
        assertThat(segs.indexOf(before)).isEqualTo(2);

        segs.publishEnd(30, 4);
        assertThat(segs.endOffset()).isEqualTo(30);
        assertThat(segs.latestEpoch()).isEqualTo(4);
    }

    @Test
    void keepFirstCutsTheTailAndReturnsTheRemovedSegments() throws IOException {
        LogSegments segs = three();
        LogSegment[] all = segs.snapshot();
        segs.cutEnd(12);
        assertThat(segs.keepFirst(2)).containsExactly(all[2]);
        assertThat(segs.snapshot()).containsExactly(all[0], all[1]);
        assertThat(segs.endOffset()).isEqualTo(12);
        assertThat(segs.keepFirst(2)).isEmpty();
        assertThatThrownBy(() -> segs.keepFirst(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> segs.keepFirst(3)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void dropFirstRemovesAPrefixButNeverTheActiveSegment() throws IOException {
        LogSegments segs = three();
        LogSegment[] all = segs.snapshot();
        assertThat(segs.dropFirst(0)).isEmpty();
        assertThat(segs.dropFirst(2)).containsExactly(all[0], all[1]);
        assertThat(segs.snapshot()).containsExactly(all[2]);
        assertThat(segs.indexOf(all[0])).isEqualTo(-1);
        assertThatThrownBy(() -> segs.dropFirst(1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(all).hasSize(3); // an earlier snapshot is never modified
    }

    @Test
    void replacePutsASegmentOfTheSameBaseInPlaceForNewReadersOnly() throws IOException {
        LogSegments segs = three();
        LogSegment[] before = segs.snapshot();
        LogSegment old = before[1];
        old.renameForDeletion(); // frees the file names, as a swap's rename does
        LogSegment fresh = segment(10);
        segs.replace(1, fresh);
        assertThat(segs.snapshot()).containsExactly(before[0], fresh, before[2]);
        assertThat(before[1]).isSameAs(old);
        assertThat(segs.indexOf(old)).isEqualTo(-1);
        assertThatThrownBy(() -> segs.replace(0, fresh)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void resetLeavesOneSegmentAndReturnsTheOldOnes() throws IOException {
        LogSegments segs = three();
        LogSegment[] before = segs.snapshot();
        LogSegment fresh = segment(500);
        assertThat(segs.reset(fresh)).containsExactly(before);
        segs.publishEnd(500, -1);
        segs.startOffset(500);
        assertThat(segs.snapshot()).containsExactly(fresh);
        assertThat(segs.startOffset()).isEqualTo(500);
        assertThat(segs.endOffset()).isEqualTo(500);
        assertThat(segs.latestEpoch()).isEqualTo(-1);
    }

    @Test
    void sizesCountTheLogFiles() throws IOException {
        LogSegments segs = three();
        ByteBuf batch = TestBatches.batch(1, 2, 3);
        try {
            int bytes = batch.readableBytes();
            BatchMaxTimestamps maxTimestamps = new BatchMaxTimestamps(1);
            maxTimestamps.add(3);
            segs.snapshot()[0].append(batch, 0, bytes, 0, maxTimestamps, 0);
            segs.active().append(batch, 0, bytes, 0, maxTimestamps, 0);
            assertThat(segs.sizeBytes()).isEqualTo(2L * bytes);
            assertThat(segs.activeSizeBytes()).isEqualTo(bytes);
        } finally {
            batch.release();
        }
    }
}
