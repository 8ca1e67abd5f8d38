package io.stellflow.server.common.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checkpoint text format and the atomic write under it. */
class CheckpointFileTest {
    @TempDir
    Path dir;

    @Test
    void aListCheckpointIsTheVersionTheCountAndOneLinePerEntry() throws IOException {
        Path file = dir.resolve("leader-epoch-checkpoint");
        assertThat(CheckpointFile.readList(file)).isNull();
        CheckpointFile.writeList(file, List.of("0 0", "3 1500"));
        assertThat(Files.readString(file)).isEqualTo("0\n2\n0 0\n3 1500\n");
        assertThat(CheckpointFile.readList(file)).containsExactly("0 0", "3 1500");
        assertThat(CheckpointFile.read(file)).containsExactly("2", "0 0", "3 1500");
        CheckpointFile.writeList(file, List.of());
        assertThat(Files.readString(file)).isEqualTo("0\n0\n");
        assertThat(dir.resolve("leader-epoch-checkpoint" + AtomicFiles.TEMP_SUFFIX))
                .doesNotExist();
    }

    /** Found by storage-ffm's RecoveryFuzzTest: a flipped byte made the log's open fail with MalformedInputException. */
    @Test
    void aCheckpointThatIsNotUtf8IsCorruptNotAnIoFailure() throws IOException {
        Path file = dir.resolve("recovery-point");
        Files.write(file, new byte[] {'0', '\n', (byte) 0xff, '\n'});
        assertThatThrownBy(() -> CheckpointFile.read(file))
                .isInstanceOf(CorruptCheckpointException.class)
                .hasMessageContaining("recovery-point")
                .hasMessageContaining("not UTF-8");
    }

    @Test
    void aCorruptCheckpointIsRefusedNamingTheFileAndTheFault() throws IOException {
        Path file = dir.resolve("cp");
        Files.writeString(file, "1\n0\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CheckpointFile.read(file))
                .isInstanceOf(CorruptCheckpointException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("version line '1'");
        Files.writeString(file, "", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CheckpointFile.read(file)).hasMessageContaining("version line missing");
        Files.writeString(file, "0\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CheckpointFile.readList(file)).hasMessageContaining("missing entry count");
        Files.writeString(file, "0\n2\na\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CheckpointFile.readList(file)).hasMessageContaining("entry count 2 but 1 entry lines");
        Files.writeString(file, "0\nx\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CheckpointFile.readList(file)).hasMessageContaining("not a number: 'x'");
    }

    @Test
    void anAtomicWriteReplacesTheWholeFileFromItsPartsAndLeavesNoTempFile() throws IOException {
        Path file = dir.resolve("snapshot");
        Files.writeString(file, "an older and longer content");
        ByteBuffer header = ByteBuffer.wrap(new byte[] {1, 2});
        AtomicFiles.write(file, header, ByteBuffer.wrap(new byte[] {3}));
        assertThat(Files.readAllBytes(file)).containsExactly(1, 2, 3);
        assertThat(header.hasRemaining()).isFalse();
        assertThat(dir.resolve("snapshot" + AtomicFiles.TEMP_SUFFIX)).doesNotExist();

        Properties p = new Properties();
        p.setProperty("cluster.id", "ünï");
        AtomicFiles.writeProperties(dir.resolve("meta.properties"), p, "test");
        assertThat(AtomicFiles.readProperties(dir.resolve("meta.properties"))).isEqualTo(p);
    }
}
