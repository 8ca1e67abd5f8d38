package io.stellflow.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.server.common.config.ConfigException;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** replica.fetch.* keys: Kafka's defaults, overrides, and a clear error naming a bad key. */
class ReplicaFetcherConfigTest {
    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void defaultsAreKafkas() {
        ReplicaFetcherConfig c = ReplicaFetcherConfig.parse(new Properties());
        assertThat(c).isEqualTo(new ReplicaFetcherConfig(1_048_576, 10_485_760, 500, 1, 1000, 2, 30_000));
        assertThat(BrokerConfig.fromProperties(props("log.dirs", "/tmp/x")).replicaFetcher())
                .isEqualTo(c);
    }

    @Test
    void overridesAreReadAndKnownToTheBroker() {
        BrokerConfig b = BrokerConfig.fromProperties(props(
                "replica.fetch.max.bytes", "4096",
                "replica.fetch.response.max.bytes", "8192",
                "replica.fetch.wait.max.ms", "100",
                "replica.fetch.min.bytes", "0",
                "replica.fetch.backoff.ms", "50",
                "replica.fetch.max.in.flight", "4",
                "replica.socket.timeout.ms", "1000"));
        assertThat(b.replicaFetcher()).isEqualTo(new ReplicaFetcherConfig(4096, 8192, 100, 0, 50, 4, 1000));
        assertThat(b.unknownKeys()).isEmpty();
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> ReplicaFetcherConfig.parse(props("replica.fetch.max.bytes", "0")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("replica.fetch.max.bytes"));
        assertThatThrownBy(() -> ReplicaFetcherConfig.parse(props("replica.fetch.max.in.flight", "65")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("replica.fetch.max.in.flight"));
        assertThatThrownBy(() -> ReplicaFetcherConfig.parse(props("replica.fetch.backoff.ms", "soon")))
                .isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> ReplicaFetcherConfig.parse(
                        props("replica.fetch.wait.max.ms", "2000", "replica.socket.timeout.ms", "1000")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("replica.fetch.wait.max.ms"));
    }
}
