package io.stellflow.broker.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.topic.TopicRegistry.CreateStatus;
import io.stellflow.server.common.file.AtomicFiles;
import io.stellflow.server.common.topic.TopicNames;
import io.stellflow.storage.LogConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TopicRegistryTest {
    @TempDir
    Path dir;

    @Test
    void createPersistsAndReopens() throws Exception {
        String topicId;
        try (TopicRegistry registry = TopicRegistry.open(dir, LogConfig.defaults(), 100)) {
            TopicRegistry.CreateResult r = registry.create("a.b-c", 3);
            assertThat(r.status()).isEqualTo(CreateStatus.CREATED);
            topicId = r.topic().topicId().toString();
            assertThat(registry.create("a.b-c", 3).status()).isEqualTo(CreateStatus.EXISTS);
            assertThat(registry.create("a.b-c", 4).status()).isEqualTo(CreateStatus.PARTITION_COUNT_MISMATCH);
            assertThat(registry.create("bad/name", 1).status()).isEqualTo(CreateStatus.INVALID_NAME);
            assertThat(registry.create("x", 101).status()).isEqualTo(CreateStatus.INVALID_PARTITIONS);
            assertThat(registry.create("x", 0).status()).isEqualTo(CreateStatus.INVALID_PARTITIONS);
        }
        assertThat(dir.resolve("a.b-c-0")).isDirectory();
        assertThat(dir.resolve("a.b-c-2")).isDirectory();
        assertThat(dir.resolve(".topics/" + topicId + ".properties")).isRegularFile();
        try (TopicRegistry registry = TopicRegistry.open(dir, LogConfig.defaults(), 100)) {
            Topic topic = registry.topic("a.b-c");
            assertThat(topic.partitionCount()).isEqualTo(3);
            assertThat(topic.topicId().toString()).isEqualTo(topicId);
            assertThat(topic.leaderEpoch()).isZero();
            assertThat(registry.partition("a.b-c", 2).leaderEpoch()).isZero();
            assertThat(registry.partition("a.b-c", 3)).isNull();
            assertThat(registry.topics()).extracting(Topic::name).containsExactly("a.b-c");
        }
    }

    @Test
    void orphanPartitionDirsAndTempFilesAreIgnored() throws Exception {
        Files.createDirectories(dir.resolve("orphan-0"));
        Files.createDirectories(dir.resolve(TopicRegistry.TOPICS_DIR));
        Path temp = dir.resolve(TopicRegistry.TOPICS_DIR).resolve("half.properties" + AtomicFiles.TEMP_SUFFIX);
        Files.writeString(temp, "topic=half\n");
        try (TopicRegistry registry = TopicRegistry.open(dir, LogConfig.defaults(), 100)) {
            assertThat(registry.topics()).isEmpty();
        }
        assertThat(temp).doesNotExist();
    }

    @Test
    void longestLegalNameIsCreatedAndReloaded() throws Exception {
        String name = "n".repeat(TopicNames.MAX_LENGTH);
        try (TopicRegistry registry = TopicRegistry.open(dir, LogConfig.defaults(), 100_000)) {
            assertThat(registry.create(name, 2).status()).isEqualTo(CreateStatus.CREATED);
        }
        try (TopicRegistry registry = TopicRegistry.open(dir, LogConfig.defaults(), 100_000)) {
            assertThat(registry.topic(name).partitionCount()).isEqualTo(2);
        }
    }

    @Test
    void newTopicNeverInheritsAnOrphanPartitionDirectory() throws Exception {
        Path orphan = Files.createDirectories(dir.resolve("reused-0"));
        Files.writeString(orphan.resolve("00000000000000000000.log"), "stale bytes of a creation that never committed");
        try (TopicRegistry registry = TopicRegistry.open(dir, LogConfig.defaults(), 100)) {
            assertThat(registry.create("reused", 1).status()).isEqualTo(CreateStatus.CREATED);
            assertThat(registry.partition("reused", 0).log().logEndOffset()).isZero();
        }
        assertThat(Files.size(dir.resolve("reused-0").resolve("00000000000000000000.log")))
                .isZero();
    }

    @Test
    void corruptMetadataFailsOpenNamingTheFile() throws Exception {
        Path topics = Files.createDirectories(dir.resolve(TopicRegistry.TOPICS_DIR));
        Files.writeString(topics.resolve("t.properties"), "topic=t\npartition.count=zero\n");
        assertThatThrownBy(() -> TopicRegistry.open(dir, LogConfig.defaults(), 100))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("t.properties");
    }

    @Test
    void brokerMetadataKeepsTheClusterIdAndRefusesAnotherBroker() throws Exception {
        BrokerMetadata first = BrokerMetadata.loadOrCreate(dir, 1, null);
        assertThat(first.clusterId()).hasSize(22);
        assertThat(BrokerMetadata.loadOrCreate(dir, 1, null)).isEqualTo(first);
        assertThat(BrokerMetadata.loadOrCreate(dir, 1, first.clusterId())).isEqualTo(first);
        assertThatThrownBy(() -> BrokerMetadata.loadOrCreate(dir, 2, null)).hasMessageContaining("broker.id");
        assertThatThrownBy(() -> BrokerMetadata.loadOrCreate(dir, 1, "other")).hasMessageContaining("cluster.id");
    }
}
