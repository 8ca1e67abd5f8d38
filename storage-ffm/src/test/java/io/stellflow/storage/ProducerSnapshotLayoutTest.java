package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProducerSnapshotLayoutTest {
    @TempDir
    Path dir;

    private static List<ProducerStateManager.Entry> workedExample() {
        ProducerStateManager m = new ProducerStateManager(1000, 10);
        m.update(7, (short) 0, 0, 2, 10, 12, 1000);
        return m.entries();
    }

    @Test
    void theWorkedExampleOfTheJavadocIsWhatIsWrittenAndItReadsBack() throws IOException {
        ProducerSnapshotLayout.write(dir, 12, workedExample());
        Path f = ProducerSnapshotLayout.file(dir, 12);
        assertThat(f.getFileName().toString()).isEqualTo("00000000000000000012.snapshot");
        byte[] bytes = Files.readAllBytes(f);
        assertThat(bytes).hasSize(66);
        String hex = HexFormat.of().formatHex(bytes);
        assertThat(hex.substring(0, 12)).isEqualTo("50534e500001");
        assertThat(hex.substring(20)) // after the CRC
                .isEqualTo("000000000000000c" + "00000001" + "0000000000000007" + "0000" + "0001" + "00000000000003e8"
                        + "00000000" + "00000002" + "000000000000000a" + "000000000000000c");
        assertThat(ProducerSnapshotLayout.read(f, 12)).isEqualTo(workedExample());
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
