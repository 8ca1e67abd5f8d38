package io.stellflow.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.network.TransportType;
import io.stellflow.server.common.config.ConfigException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class BrokerConfigTest {

    private static Properties props(String... keyValues) {
        Properties props = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            props.setProperty(keyValues[i], keyValues[i + 1]);
        }
        return props;
    }

    @Test
    void defaultsFollowKafkaNames() {
        BrokerConfig config = BrokerConfig.fromProperties(new Properties());
        assertThat(config.brokerId()).isZero();
        assertThat(config.listener()).isEqualTo(new Listener("PLAINTEXT", "127.0.0.1", 9092));
        assertThat(config.advertisedListener()).isNull();
        assertThat(config.logDirs()).containsExactly(Path.of("/tmp/stellflow-data"));
        assertThat(config.numPartitions()).isEqualTo(1);
        assertThat(config.logConfig().segmentBytes()).isEqualTo(1 << 30);
        assertThat(config.logConfig().indexIntervalBytes()).isEqualTo(4096);
        assertThat(config.logConfig().indexMaxBytes()).isEqualTo(10 * 1024 * 1024);
        assertThat(config.logConfig().flushMessages()).isEqualTo(Long.MAX_VALUE);
        assertThat(config.logConfig().flushMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(config.messageMaxBytes()).isEqualTo(1_048_588);
        assertThat(config.clusterId()).isNull();
        assertThat(config.autoCreateTopicsEnable()).isFalse();
        assertThat(config.transport()).isEqualTo(TransportType.AUTO);
        assertThat(config.producerState().maxProducerIdsPerBroker()).isEqualTo(400_000);
        assertThat(config.transactionCoordinator().maxTransactionalIds()).isEqualTo(100_000);
        assertThat(config.unknownKeys()).isEmpty();
    }

    @Test
    void theProducerStateBoundsAreRead() {
        BrokerConfig config = BrokerConfig.fromProperties(props(
                "producer.id.max.per.partition", "50",
                "producer.id.max.per.broker", "1000",
                "transactional.id.max.per.broker", "300"));
        assertThat(config.producerState().maxProducerIdsPerPartition()).isEqualTo(50);
        assertThat(config.producerState().maxProducerIdsPerBroker()).isEqualTo(1000);
        assertThat(config.transactionCoordinator().maxTransactionalIds()).isEqualTo(300);
        assertThat(config.unknownKeys()).isEmpty();
    }

    @Test
    void readsEveryKey() {
        BrokerConfig config = BrokerConfig.fromProperties(props(
                "broker.id", "7",
                "listeners", "PLAINTEXT://0.0.0.0:0",
                "advertised.listeners", "PLAINTEXT://broker-7.example:19092",
                "log.dirs", "/data/a, /data/b",
                "num.partitions", "3",
                "log.segment.bytes", "1048576",
                "log.index.interval.bytes", "0",
                "log.index.size.max.bytes", "4096",
                "log.flush.interval.messages", "1",
                "log.flush.interval.ms", "1000",
                "message.max.bytes", "2000000",
                "cluster.id", "abc",
                "auto.create.topics.enable", "TRUE",
                "transport", "epoll",
                "num.network.threads", "4",
                "num.io.threads", "16",
                "some.future.key", "x"));
        assertThat(config.brokerId()).isEqualTo(7);
        assertThat(config.listener()).isEqualTo(new Listener("PLAINTEXT", "0.0.0.0", 0));
        assertThat(config.advertisedListener()).isEqualTo(new Listener("PLAINTEXT", "broker-7.example", 19092));
        assertThat(config.logDirs()).containsExactly(Path.of("/data/a"), Path.of("/data/b"));
        assertThat(config.numPartitions()).isEqualTo(3);
        assertThat(config.logConfig().segmentBytes()).isEqualTo(1_048_576);
        assertThat(config.logConfig().indexIntervalBytes()).isZero();
        assertThat(config.logConfig().indexMaxBytes()).isEqualTo(4096);
        assertThat(config.logConfig().flushMessages()).isEqualTo(1);
        assertThat(config.logConfig().flushMs()).isEqualTo(1000);
        assertThat(config.messageMaxBytes()).isEqualTo(2_000_000);
        assertThat(config.clusterId()).isEqualTo("abc");
        assertThat(config.autoCreateTopicsEnable()).isTrue();
        assertThat(config.transport()).isEqualTo(TransportType.EPOLL);
        assertThat(config.numNetworkThreads()).isEqualTo(4);
        assertThat(config.numIoThreads()).isEqualTo(16);
        assertThat(config.unknownKeys()).containsExactly("some.future.key");
    }

    @Test
    void logDirIsTheFallbackForLogDirs() {
        assertThat(BrokerConfig.fromProperties(props("log.dir", "/x")).logDirs())
                .containsExactly(Path.of("/x"));
    }

    @Test
    void badValuesNameTheKeyAndTheValue() {
        List<String[]> cases = List.of(
                new String[] {"broker.id", "-1"},
                new String[] {"broker.id", "one"},
                new String[] {"num.partitions", "0"},
                new String[] {"log.segment.bytes", "100"},
                new String[] {"log.index.size.max.bytes", "4"},
                new String[] {"log.flush.interval.messages", "0"},
                new String[] {"message.max.bytes", "77"},
                new String[] {"message.max.bytes", "67108860"},
                new String[] {"auto.create.topics.enable", "yes"},
                new String[] {"transport", "kqueue"},
                new String[] {"listeners", "SSL://127.0.0.1:9093"},
                new String[] {"listeners", "PLAINTEXT://127.0.0.1"},
                new String[] {"listeners", "PLAINTEXT://127.0.0.1:70000"},
                new String[] {"listeners", "PLAINTEXT://a:1,PLAINTEXT://b:2"},
                new String[] {"cluster.id", " "},
                new String[] {"num.io.threads", "0"},
                new String[] {"producer.id.max.per.broker", "0"},
                new String[] {"transactional.id.max.per.broker", "0"});
        for (String[] c : cases) {
            assertThatThrownBy(() -> BrokerConfig.fromProperties(props(c[0], c[1])))
                    .as("%s=%s", c[0], c[1])
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("'" + c[0] + "'")
                    .hasMessageContaining("'" + c[1] + "'")
                    .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo(c[0]));
        }
    }

    /** As Kafka's broker key (and the topic key, TopicConfigRules): the exact lower-case names only. */
    @Test
    void compressionTypeTakesKafkasLowerCaseNamesOnly() {
        assertThat(BrokerConfig.fromProperties(props())
                        .logConfig()
                        .compression()
                        .target())
                .isNull(); // producer
        assertThat(BrokerConfig.fromProperties(props("compression.type", " zstd "))
                        .logConfig()
                        .compression()
                        .target())
                .isEqualTo(io.stellflow.protocol.compression.CompressionType.ZSTD);
        for (String bad : List.of("ZSTD", "Gzip", "Producer", "none", "brotli")) {
            assertThatThrownBy(() -> BrokerConfig.fromProperties(props("compression.type", bad)))
                    .as(bad)
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("'compression.type'")
                    .hasMessageContaining("'" + bad + "'")
                    .hasMessageContaining("lower case");
        }
    }

    @Test
    void listenerParsesIpv6AndEmptyHost() {
        assertThat(Listener.parse("listeners", "PLAINTEXT://[::1]:9092"))
                .isEqualTo(new Listener("PLAINTEXT", "::1", 9092));
        assertThat(Listener.parse("listeners", "PLAINTEXT://:9092")).isEqualTo(new Listener("PLAINTEXT", "", 9092));
        assertThat(new Listener("PLAINTEXT", "::1", 1).toString()).isEqualTo("PLAINTEXT://[::1]:1");
    }

    @Test
    void logRetentionCleanupAndManagerKeysAreReadAndChecked() {
        BrokerConfig config = BrokerConfig.fromProperties(props(
                "log.dirs", "/data/a,/data/b",
                "log.retention.ms", "1000",
                "log.retention.bytes", "2048",
                "log.roll.ms", "500",
                "log.cleanup.policy", "compact,delete",
                "log.segment.delete.delay.ms", "7",
                "log.cleaner.delete.retention.ms", "9",
                "log.cleaner.min.cleanable.ratio", "0.2",
                "log.retention.check.interval.ms", "100",
                "log.flush.offset.checkpoint.interval.ms", "200",
                "num.recovery.threads.per.data.dir", "3"));
        assertThat(config.logConfig().retentionMs()).isEqualTo(1000);
        assertThat(config.logConfig().retentionBytes()).isEqualTo(2048);
        assertThat(config.logConfig().segmentMs()).isEqualTo(500);
        assertThat(config.logConfig().cleanupPolicy().toString()).isEqualTo("compact,delete");
        assertThat(config.logConfig().fileDeleteDelayMs()).isEqualTo(7);
        assertThat(config.logConfig().deleteRetentionMs()).isEqualTo(9);
        assertThat(config.logConfig().minCleanableDirtyRatio()).isEqualTo(0.2);
        assertThat(config.logManagerConfig().logDirs()).containsExactly(Path.of("/data/a"), Path.of("/data/b"));
        assertThat(config.logManagerConfig().retentionCheckIntervalMs()).isEqualTo(100);
        assertThat(config.logManagerConfig().checkpointIntervalMs()).isEqualTo(200);
        assertThat(config.logManagerConfig().loadThreads()).isEqualTo(6);
        BrokerConfig defaults = BrokerConfig.fromProperties(new Properties());
        assertThat(defaults.logConfig().retentionMs()).isEqualTo(7L * 24 * 3600 * 1000);
        assertThat(defaults.logConfig().cleanupPolicy().toString()).isEqualTo("delete");
        assertThat(defaults.logManagerConfig().retentionCheckIntervalMs()).isEqualTo(300_000);
        assertThatThrownBy(() -> BrokerConfig.fromProperties(props("log.cleanup.policy", "shred")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("log.cleanup.policy")
                .hasMessageContaining("shred");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(props("log.cleaner.min.cleanable.ratio", "2")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("log.cleaner.min.cleanable.ratio");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(props("log.retention.ms", "-2")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("log.retention.ms");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(props("log.dirs", "/data/a,/data/b/../a")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("twice");
    }

    /** Issue #22, defect 4: Kafka's sample config says log.retention.hours=168; it used to be dropped. */
    @Test
    void kafkasRetentionAndRollAliasesAreHonouredFinestUnitFirst() {
        BrokerConfig hours = BrokerConfig.fromProperties(props("log.retention.hours", "1", "log.roll.hours", "2"));
        assertThat(hours.unknownKeys()).isEmpty();
        assertThat(hours.logConfig().retentionMs()).isEqualTo(3_600_000L);
        assertThat(hours.logConfig().segmentMs()).isEqualTo(7_200_000L);

        BrokerConfig minutes =
                BrokerConfig.fromProperties(props("log.retention.hours", "1", "log.retention.minutes", "30"));
        assertThat(minutes.logConfig().retentionMs()).isEqualTo(1_800_000L);

        BrokerConfig ms = BrokerConfig.fromProperties(props(
                "log.retention.hours",
                "1",
                "log.retention.minutes",
                "30",
                "log.retention.ms",
                "5000",
                "log.roll.hours",
                "2",
                "log.roll.ms",
                "60000"));
        assertThat(ms.logConfig().retentionMs()).isEqualTo(5_000L);
        assertThat(ms.logConfig().segmentMs()).isEqualTo(60_000L);

        assertThat(BrokerConfig.fromProperties(props("log.retention.hours", "-1"))
                        .logConfig()
                        .retentionMs())
                .isEqualTo(-1L);
        assertThatThrownBy(() -> BrokerConfig.fromProperties(props("log.retention.hours", "one")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("log.retention.hours");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(props("log.roll.hours", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("log.roll.hours");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(props("log.retention.hours", "9223372036854775807")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("log.retention.hours")
                .hasMessageContaining("too large");
    }
}
