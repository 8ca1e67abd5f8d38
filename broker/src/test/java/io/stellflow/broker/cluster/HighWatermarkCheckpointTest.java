package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.topic.Partition;
import io.stellflow.server.common.file.FailureEpisode;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** The {@code replication-offset-checkpoint} format: per log dir, atomic, corrupt files refused. */
class HighWatermarkCheckpointTest {
    @TempDir
    Path dir;

    private static UnifiedLog open(Path partitionDir) throws IOException {
        return UnifiedLog.open(partitionDir, new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
    }

    @Test
    void eachLogDirGetsTheHighWatermarksOfItsPartitionsInKafkasLayout() throws IOException {
        Path a = Files.createDirectories(dir.resolve("a"));
        Path b = Files.createDirectories(dir.resolve("b"));
        Path empty = Files.createDirectories(dir.resolve("empty"));
        try (UnifiedLog l0 = open(a.resolve("orders-0"));
                UnifiedLog l1 = open(b.resolve("orders-1"));
                UnifiedLog l2 = open(a.resolve("my.topic_x-12"))) {
            Partition p0 = new Partition("orders", 0, 0, l0, 1, 0L);
            Partition p1 = new Partition("orders", 1, 0, l1, 1, 0L);
            Partition p2 = new Partition("my.topic_x", 12, 0, l2, 1, 0L);
            FailureEpisode failures = new FailureEpisode(
                    "hw-checkpoint", LoggerFactory.getLogger(getClass()), InstantSource.system(), task -> {});
            int written = HighWatermarkCheckpoint.write(
                    List.of(a, b, empty),
                    visit -> {
                        visit.accept(p0);
                        visit.accept(p1);
                        visit.accept(p2);
                    },
                    failures);
            assertThat(written).isEqualTo(3);
            assertThat(failures.failures()).isZero();
        }
        assertThat(Files.readString(a.resolve(HighWatermarkCheckpoint.FILE_NAME)))
                .isEqualTo("0\n2\norders 0 0\nmy.topic_x 12 0\n");
        assertThat(Files.readString(empty.resolve(HighWatermarkCheckpoint.FILE_NAME)))
                .isEqualTo("0\n0\n");
        assertThat(HighWatermarkCheckpoint.readAll(List.of(a, b, empty, dir.resolve("missing"))))
                .isEqualTo(Map.of("orders-0", 0L, "orders-1", 0L, "my.topic_x-12", 0L));
    }

    @Test
    void aCorruptFileIsRefusedAndItsPartitionsStartWithoutAHighWatermark() throws IOException {
        Path file = dir.resolve(HighWatermarkCheckpoint.FILE_NAME);
        Files.writeString(file, "0\n2\norders 0 15\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> HighWatermarkCheckpoint.read(file))
                .hasMessageContaining("entry count 2 but 1 entry lines");
        Files.writeString(file, "1\n0\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> HighWatermarkCheckpoint.read(file)).hasMessageContaining("version line '1'");
        Files.writeString(file, "0\n1\norders 0\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> HighWatermarkCheckpoint.read(file)).hasMessageContaining("bad entry line 'orders 0'");
        assertThat(HighWatermarkCheckpoint.readAll(List.of(dir))).isEmpty();

        Files.writeString(file, "0\n1\norders 3 15\n", StandardCharsets.UTF_8);
        assertThat(HighWatermarkCheckpoint.readAll(List.of(dir))).isEqualTo(Map.of("orders-3", 15L));
    }
}
