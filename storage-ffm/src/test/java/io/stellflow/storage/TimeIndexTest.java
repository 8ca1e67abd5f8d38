package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TimeIndexTest {
    @TempDir
    Path dir;

    @Test
    void entriesAreBigEndianTwelveBytesAndTheFileIsPreallocatedThenTrimmed() throws IOException {
        Path file = dir.resolve("00000000000000001000.timeindex");
        TimeIndex index = TimeIndex.create(file, 1000, 80); // offset index of 10 entries -> 11 slots
        assertThat(Files.size(file)).isEqualTo(11 * 12);
        assertThat(TimeIndexLayout.maxBytesFor(80)).isEqualTo(11 * 12);
        assertThat(index.maybeAppend(1_700_000_000_000L, 42)).isTrue();
        index.close();
        assertThat(Files.readAllBytes(file)).containsExactly(0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0, 0, 0, 0, 0x2a);
    }

    @Test
    void onlyAGrowingTimestampMakesAnEntry() throws IOException {
        TimeIndex index = TimeIndex.create(dir.resolve("g.timeindex"), 0, 800);
        try {
            assertThat(index.maybeAppend(-1, 0)).isFalse(); // no timestamp
            assertThat(index.maybeAppend(100, 0)).isTrue();
            assertThat(index.maybeAppend(100, 5)).isFalse();
            assertThat(index.maybeAppend(90, 6)).isFalse();
            assertThat(index.maybeAppend(200, 7)).isTrue();
            assertThat(index.entries()).isEqualTo(2);
            assertThatThrownBy(() -> index.maybeAppend(300, 7)).isInstanceOf(IllegalStateException.class);
        } finally {
            index.close();
        }
    }

    @Test
    void lookupGivesTheBatchOfTheLastEntryAtOrBelowTheTarget() throws IOException {
        TimeIndex index = TimeIndex.create(dir.resolve("l.timeindex"), 500, 800);
        try {
            assertThat(index.lookup(1000)).isEqualTo(500); // empty: the segment base
            index.maybeAppend(100, 0);
            index.maybeAppend(200, 10);
            index.maybeAppend(300, 20);
            assertThat(index.lookup(99)).isEqualTo(500);
            assertThat(index.lookup(100)).isEqualTo(500);
            assertThat(index.lookup(199)).isEqualTo(500);
            assertThat(index.lookup(200)).isEqualTo(510);
            assertThat(index.lookup(299)).isEqualTo(510);
            assertThat(index.lookup(Long.MAX_VALUE)).isEqualTo(520);
        } finally {
            index.close();
        }
    }

    @Test
    void aFullIndexTakesTheFinalEntryInPlaceOfTheLast() throws IOException {
        TimeIndex index = TimeIndex.create(dir.resolve("f.timeindex"), 0, 8); // 2 slots
        try {
            index.maybeAppend(10, 0);
            index.maybeAppend(20, 1);
            assertThat(index.isFull()).isTrue();
            index.appendOrReplaceLast(30, 2);
            assertThat(index.entries()).isEqualTo(2);
            assertThat(index.lastTimestamp()).isEqualTo(30);
            assertThat(index.lookup(25)).isEqualTo(0);
        } finally {
            index.close();
        }
    }

    @Test
    void sealTrimsAndTruncateMakesItWritableAgain() throws IOException {
        Path file = dir.resolve("s.timeindex");
        TimeIndex index = TimeIndex.create(file, 0, 800);
        index.maybeAppend(10, 0);
        index.maybeAppend(20, 3);
        index.maybeAppend(30, 6);
        index.seal();
        assertThat(Files.size(file)).isEqualTo(36);
        assertThat(index.entriesBelowRelativeOffset(6)).isEqualTo(2);
        index.truncateToEntries(2);
        assertThat(index.lookup(35)).isEqualTo(3);
        assertThat(index.maybeAppend(25, 4)).isTrue();
        index.close();
        assertThat(Files.size(file)).isEqualTo(36);
        assertThatThrownBy(() -> index.lookup(7)).isInstanceOf(ClosedChannelException.class);
    }

    @Test
    void openExistingRejectsImpossibleSizesAndAZeroTail() throws IOException {
        Path file = dir.resolve("e.timeindex");
        Files.write(file, new byte[13]);
        assertThat(TimeIndex.openExisting(file, 0, 80, false)).isNull();
        Files.write(file, new byte[12 * 12]); // 11 slots max
        assertThat(TimeIndex.openExisting(file, 0, 80, false)).isNull();

        ByteBuffer two =
                ByteBuffer.allocate(24).putLong(100).putInt(0).putLong(200).putInt(4);
        Files.write(file, two.array());
        TimeIndex ok = TimeIndex.openExisting(file, 0, 80, false);
        assertThat(ok.entries()).isEqualTo(2);
        assertThat(ok.isConsistentWith(4)).isTrue();
        assertThat(ok.isConsistentWith(3)).isFalse(); // names a batch past the log
        ok.close();

        byte[] preallocated = new byte[11 * 12];
        System.arraycopy(two.array(), 0, preallocated, 0, 24);
        Files.write(file, preallocated); // left at its preallocated size: zero tail
        TimeIndex padded = TimeIndex.openExisting(file, 0, 80, false);
        assertThat(padded.entries()).isEqualTo(11);
        assertThat(padded.isConsistentWith(Integer.MAX_VALUE)).isFalse();
        padded.close();
    }
}
