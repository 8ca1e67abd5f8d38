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

class OffsetIndexTest {
    @TempDir
    Path dir;

    @Test
    void lookupFindsTheLastEntryAtOrBelowTheTarget() throws IOException {
        OffsetIndex index = OffsetIndex.create(dir.resolve("i.index"), 1000, 1024);
        try {
            assertThat(index.lookup(1000)).isZero();
            index.append(0, 0);
            index.append(10, 500);
            index.append(20, 900);
            assertThat(index.lookup(999)).isZero();
            assertThat(index.lookup(1000)).isZero();
            assertThat(index.lookup(1009)).isZero();
            assertThat(index.lookup(1010)).isEqualTo(500);
            assertThat(index.lookup(1019)).isEqualTo(500);
            assertThat(index.lookup(1020)).isEqualTo(900);
            assertThat(index.lookup(Long.MAX_VALUE)).isEqualTo(900);
        } finally {
            index.close();
        }
    }

    @Test
    void entriesAreBigEndianPairsAndTheFileIsPreallocatedThenTrimmed() throws IOException {
        Path file = dir.resolve("00000000000000001000.index");
        OffsetIndex index = OffsetIndex.create(file, 1000, 1024);
        assertThat(Files.size(file)).isEqualTo(1024);
        index.append(42, 8192);
        index.close();
        assertThat(Files.readAllBytes(file)).containsExactly(0, 0, 0, 42, 0, 0, 0x20, 0);
    }

    @Test
    void sealTrimsAndKeepsLookupsWorking() throws IOException {
        Path file = dir.resolve("s.index");
        OffsetIndex index = OffsetIndex.create(file, 0, 800);
        index.append(0, 0);
        index.append(5, 100);
        index.seal();
        assertThat(Files.size(file)).isEqualTo(16);
        assertThat(index.lookup(7)).isEqualTo(100);
        assertThatThrownBy(() -> index.append(6, 200)).isInstanceOf(IllegalStateException.class);
        index.close();
        assertThatThrownBy(() -> index.lookup(7)).isInstanceOf(ClosedChannelException.class);
    }

    @Test
    void rejectsOutOfOrderEntriesAndAFullIndex() throws IOException {
        OffsetIndex index = OffsetIndex.create(dir.resolve("f.index"), 0, 16);
        try {
            index.append(1, 10);
            assertThatThrownBy(() -> index.append(1, 20)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> index.append(2, 10)).isInstanceOf(IllegalStateException.class);
            index.append(2, 20);
            assertThat(index.isFull()).isTrue();
            assertThatThrownBy(() -> index.append(3, 30)).isInstanceOf(IllegalStateException.class);
        } finally {
            index.close();
        }
    }

    @Test
    void openExistingRejectsImpossibleSizesAndChecksConsistency() throws IOException {
        Path file = dir.resolve("e.index");
        Files.write(file, new byte[12]);
        assertThat(OffsetIndex.openExisting(file, 0, 1024, false)).isNull();
        Files.write(file, new byte[2048]);
        assertThat(OffsetIndex.openExisting(file, 0, 1024, false)).isNull();

        Files.write(
                file,
                ByteBuffer.allocate(16).putInt(0).putInt(0).putInt(3).putInt(50).array());
        OffsetIndex ok = OffsetIndex.openExisting(file, 0, 1024, false);
        assertThat(ok.entries()).isEqualTo(2);
        assertThat(ok.isConsistentWith(100)).isTrue();
        assertThat(ok.isConsistentWith(50)).isFalse(); // position 50 is not inside a 50-byte log
        ok.close();

        Files.write(file, new byte[16]); // two (0, 0) entries: not strictly increasing
        OffsetIndex zeroed = OffsetIndex.openExisting(file, 0, 1024, false);
        assertThat(zeroed.isConsistentWith(100)).isFalse();
        zeroed.close();
    }
}
