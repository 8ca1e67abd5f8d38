package io.stellflow.broker.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code meta.properties}: absent in a new broker's dir, then written once and checked at every start. */
class BrokerMetadataTest {
    @TempDir
    Path dir;

    @Test
    void aNewDirHasNoneAndTheWrittenOneKeepsTheClusterIdAndRefusesAnotherBrokerOrCluster() throws Exception {
        assertThat(BrokerMetadata.read(dir, 1, null)).isNull();
        BrokerMetadata written = BrokerMetadata.create(dir, 1, "cluster-a");
        assertThat(dir.resolve(BrokerMetadata.FILE_NAME)).isRegularFile();
        assertThat(BrokerMetadata.read(dir, 1, null)).isEqualTo(written);
        assertThat(BrokerMetadata.read(dir, 1, "cluster-a")).isEqualTo(written);
        assertThatThrownBy(() -> BrokerMetadata.read(dir, 2, null)).hasMessageContaining("broker.id");
        assertThatThrownBy(() -> BrokerMetadata.read(dir, 1, "other")).hasMessageContaining("cluster.id");
    }

    @Test
    void aFileWithoutTheIdsIsCorrupt() throws Exception {
        Files.writeString(dir.resolve(BrokerMetadata.FILE_NAME), "version=1\n");
        assertThatThrownBy(() -> BrokerMetadata.read(dir, 1, null)).hasMessageContaining("Corrupt");
    }
}
