package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProducerSnapshotLayoutTest {
    @TempDir
    Path dir;

    private static List<ProducerStateManager.Entry> workedExample() {
        ProducerStateManager m = new ProducerStateManager(1000, 10);
        m.beginTransaction(7, (short) 0, 9, 4, 900);
        m.update(7, (short) 0, 0, 2, 10, 12, 1000);
        return m.entries();
    }

    @Test
    void theWorkedExampleOfTheJavadocIsWhatIsWrittenAndItReadsBack() throws IOException {
        ProducerSnapshotLayout.write(dir, 12, workedExample());
        Path f = ProducerSnapshotLayout.file(dir, 12);
        assertThat(f.getFileName().toString()).isEqualTo("00000000000000000012.snapshot");
        byte[] bytes = Files.readAllBytes(f);
        assertThat(bytes).hasSize(94);
        String hex = HexFormat.of().formatHex(bytes);
        assertThat(hex.substring(0, 12)).isEqualTo("50534e500003");
        assertThat(hex.substring(20)) // after the CRC
                .isEqualTo("000000000000000c" + "00000001" + "0000000000000007" + "0000" + "0001" + "00000000000003e8"
                        + "0000000000000009" + "0000000000000004" + "ffffffff"
                        + "00000000" + "00000002" + "000000000000000a" + "000000000000000c" + "0000000000000000");
        assertThat(ProducerSnapshotLayout.read(f, 12)).isEqualTo(workedExample());
    }

    @Test
    void aTakenDigestRoundTrips() throws IOException {
        ProducerStateManager m = new ProducerStateManager(1000, 10);
        m.update(7, (short) 0, 0, 2, 10, 12, 1000);
        m.update(7, (short) 0, 3, 4, 13, 14, 1000);
        assertThat(m.captureDigests(13, base -> base == 10 ? 0x1234_5678_9abc_def0L : 99))
                .isEqualTo(1);
        ProducerSnapshotLayout.write(dir, 15, m.entries());
        ProducerStateManager back = new ProducerStateManager(1000, 10);
        back.load(ProducerSnapshotLayout.read(ProducerSnapshotLayout.file(dir, 15), 15));
        assertThat(back.entries()).isEqualTo(m.entries());
        assertThat(back.check(7, (short) 0, 0, 2, 1000)).isEqualTo(ProducerStateManager.DUPLICATE);
        assertThat(back.duplicateDigest()).isEqualTo(0x1234_5678_9abc_def0L);
        assertThat(back.check(7, (short) 0, 3, 4, 1000)).isEqualTo(ProducerStateManager.DUPLICATE);
        assertThat(back.duplicateDigest()).isEqualTo(ProducerStateManager.NO_DIGEST); // at 13: not below 13
    }

    @Test
    void aVersion2SnapshotStillReadsWithoutDigests() throws IOException {
        // Version 2 as written before content digests: the 86-byte worked example of that version.
        byte[] v2 = HexFormat.of()
                .parseHex("50534e50" + "0002" + "00000000" + "000000000000000c" + "00000001" + "0000000000000007"
                        + "0000" + "0001" + "00000000000003e8" + "0000000000000009" + "0000000000000004" + "ffffffff"
                        + "00000000" + "00000002" + "000000000000000a" + "000000000000000c");
        CRC32C crc = new CRC32C();
        crc.update(v2, ProducerSnapshotLayout.OFFSET_OFFSET, v2.length - ProducerSnapshotLayout.OFFSET_OFFSET);
        ByteBuffer.wrap(v2).putInt(ProducerSnapshotLayout.CRC_OFFSET, (int) crc.getValue());
        Path f = ProducerSnapshotLayout.file(dir, 12);
        Files.write(f, v2);
        assertThat(ProducerSnapshotLayout.read(f, 12)).isEqualTo(workedExample());
    }

    @Test
    void aVersion1SnapshotStillReadsWithNoOpenTransaction() throws IOException {
        // Version 1 as written before transactions: the 66-byte worked example of that version.
        byte[] v1 = HexFormat.of()
                .parseHex("50534e50" + "0001" + "00000000" + "000000000000000c" + "00000001" + "0000000000000007"
                        + "0000" + "0001" + "00000000000003e8" + "00000000" + "00000002" + "000000000000000a"
                        + "000000000000000c");
        CRC32C crc = new CRC32C();
        crc.update(v1, ProducerSnapshotLayout.OFFSET_OFFSET, v1.length - ProducerSnapshotLayout.OFFSET_OFFSET);
        ByteBuffer.wrap(v1).putInt(ProducerSnapshotLayout.CRC_OFFSET, (int) crc.getValue());
        Path f = ProducerSnapshotLayout.file(dir, 12);
        Files.write(f, v1);
        List<ProducerStateManager.Entry> read = ProducerSnapshotLayout.read(f, 12);
        ProducerStateManager m = new ProducerStateManager(1000, 10);
        m.load(read);
        assertThat(m.nextSequence(7)).isEqualTo(3);
        assertThat(m.openTransactionFirstOffset(7)).isEqualTo(-1);
        assertThat(m.firstUnstableOffset()).isEqualTo(ProducerStateManager.NO_OPEN_TRANSACTION);
        // A version-1 entry without batches was never written: still corrupt.
        v1[ProducerSnapshotLayout.HEADER_SIZE + 11] = 0;
        crc.reset();
        crc.update(v1, ProducerSnapshotLayout.OFFSET_OFFSET, v1.length - ProducerSnapshotLayout.OFFSET_OFFSET);
        ByteBuffer.wrap(v1).putInt(ProducerSnapshotLayout.CRC_OFFSET, (int) crc.getValue());
        Files.write(f, v1);
        assertThatThrownBy(() -> ProducerSnapshotLayout.read(f, 12)).hasMessageContaining("has 0 batches");
    }

    @Test
    void anOpenTransactionWithoutBatchesRoundTrips() throws IOException {
        ProducerStateManager m = new ProducerStateManager(1000, 10);
        m.beginTransaction(3, (short) 1, 40, 2, 500); // BEGIN written, its batch not yet
        ProducerSnapshotLayout.write(dir, 41, m.entries());
        ProducerStateManager back = new ProducerStateManager(1000, 10);
        back.load(ProducerSnapshotLayout.read(ProducerSnapshotLayout.file(dir, 41), 41));
        assertThat(back.entries()).isEqualTo(m.entries());
        assertThat(back.firstUnstableOffset()).isEqualTo(40);
        assertThat(back.nextSequence(3)).isZero();
    }

    @Test
    void corruptOrTruncatedSnapshotsAreRefusedNamingTheFile() throws IOException {
        ProducerSnapshotLayout.write(dir, 12, workedExample());
        Path f = ProducerSnapshotLayout.file(dir, 12);
        byte[] good = Files.readAllBytes(f);

        byte[] flipped = good.clone();
        flipped[40] ^= 1;
        Files.write(f, flipped);
        assertThatThrownBy(() -> ProducerSnapshotLayout.read(f, 12))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(f.toString())
                .hasMessageContaining("CRC-32C mismatch");

        Files.write(f, Arrays.copyOf(good, 30));
        assertThatThrownBy(() -> ProducerSnapshotLayout.read(f, 12)).hasMessageContaining("CRC-32C mismatch");
        Files.write(f, Arrays.copyOf(good, 10));
        assertThatThrownBy(() -> ProducerSnapshotLayout.read(f, 12)).hasMessageContaining("no snapshot header");

        Files.write(f, good);
        assertThatThrownBy(() -> ProducerSnapshotLayout.read(f, 13)).hasMessageContaining("differs from its name");
    }

    @Test
    void onlyTheNewestSnapshotsAreKept() throws IOException {
        for (long offset : new long[] {5, 9, 20}) {
            ProducerSnapshotLayout.write(dir, offset, workedExample());
        }
        assertThat(ProducerSnapshotLayout.list(dir).keySet()).containsExactly(9L, 20L);
    }
}
