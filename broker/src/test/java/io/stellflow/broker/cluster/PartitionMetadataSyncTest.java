package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.server.common.file.AtomicFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PartitionMetadataSync}: files written unsynced read back whole with no temp file left, a batch
 * larger than the pool is synced with every file accounted for, and a file that cannot be synced is
 * reported by path while the others succeed.
 */
class PartitionMetadataSyncTest {
    @TempDir
    Path dir;

    private static Properties topicId(String id) {
        Properties p = new Properties();
        p.setProperty("version", "0");
        p.setProperty("topic_id", id);
        return p;
    }

    @Test
    void aBatchIsWrittenThenSyncedAndReadsBackWhole() throws IOException {
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < PartitionMetadataSync.THREADS * 3 + 1; i++) {
            Path partitionDir = Files.createDirectories(dir.resolve("t-" + i));
            Path file = partitionDir.resolve(ReplicaManager.PARTITION_METADATA_FILE);
            PartitionMetadataSync.writeUnsynced(file, topicId("id-" + i), "test");
            files.add(file);
        }
        assertThat(PartitionMetadataSync.sync(files)).isEmpty();
        for (int i = 0; i < files.size(); i++) {
            assertThat(AtomicFiles.readProperties(files.get(i)).getProperty("topic_id"))
                    .isEqualTo("id-" + i);
            try (var listing = Files.list(files.get(i).getParent())) {
                assertThat(listing.map(p -> p.getFileName().toString()))
                        .containsExactly(ReplicaManager.PARTITION_METADATA_FILE);
            }
        }
        // Rewriting replaces the content.
        PartitionMetadataSync.writeUnsynced(files.get(0), topicId("other"), "test");
        assertThat(PartitionMetadataSync.sync(List.of(files.get(0)))).isEmpty();
        assertThat(AtomicFiles.readProperties(files.get(0)).getProperty("topic_id"))
                .isEqualTo("other");
    }

    @Test
    void aFileThatCannotBeSyncedIsReportedAndTheOthersAreNot() throws IOException {
        Path good = Files.createDirectories(dir.resolve("good-0")).resolve(ReplicaManager.PARTITION_METADATA_FILE);
        PartitionMetadataSync.writeUnsynced(good, topicId("g"), "test");
        Path gone = dir.resolve("gone-0").resolve(ReplicaManager.PARTITION_METADATA_FILE);
        Map<Path, IOException> failed = PartitionMetadataSync.sync(List.of(good, gone));
        assertThat(failed).containsOnlyKeys(gone);
        assertThat(AtomicFiles.readProperties(good).getProperty("topic_id")).isEqualTo("g");
    }
}
