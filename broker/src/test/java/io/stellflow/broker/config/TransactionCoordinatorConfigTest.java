package io.stellflow.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.server.common.config.ConfigException;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** transaction.*, transactional.id.expiration.ms: Kafka's defaults, overrides, a clear error naming a bad key. */
class TransactionCoordinatorConfigTest {
    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void defaultsAreKafkas() {
        TransactionCoordinatorConfig c = TransactionCoordinatorConfig.parse(new Properties());
        assertThat(c)
                .isEqualTo(new TransactionCoordinatorConfig(
                        50, (short) 3, 104_857_600, 60_000, 900_000, 10_000, 604_800_000L));
        assertThat(BrokerConfig.fromProperties(props("log.dirs", "/tmp/x")).transactionCoordinator())
                .isEqualTo(c);
    }

    @Test
    void overridesAreReadAndKnownToTheBroker() {
        BrokerConfig b = BrokerConfig.fromProperties(props(
                "transaction.state.log.num.partitions", "3",
                "transaction.state.log.replication.factor", "1",
                "transaction.state.log.segment.bytes", "4096",
                "transaction.default.timeout.ms", "5000",
                "transaction.max.timeout.ms", "5000",
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", "200",
                "transactional.id.expiration.ms", "60000"));
        assertThat(b.transactionCoordinator())
                .isEqualTo(new TransactionCoordinatorConfig(3, (short) 1, 4096, 5000, 5000, 200, 60_000));
        assertThat(b.unknownKeys()).isEmpty();
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> TransactionCoordinatorConfig.parse(props("transaction.state.log.num.partitions", "0")))
                .isInstanceOfSatisfying(
                        ConfigException.class,
                        e -> assertThat(e.key()).isEqualTo("transaction.state.log.num.partitions"));
        // The default timeout may not exceed the maximum.
        assertThatThrownBy(() -> TransactionCoordinatorConfig.parse(
                        props("transaction.default.timeout.ms", "2000", "transaction.max.timeout.ms", "1000")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("transaction.default.timeout.ms"));
        assertThatThrownBy(() -> TransactionCoordinatorConfig.parse(
                        props("transaction.abort.timed.out.transaction.cleanup.interval.ms", "0")))
                .isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> TransactionCoordinatorConfig.parse(props("transactional.id.expiration.ms", "x")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("transactional.id.expiration.ms"));
    }
}
