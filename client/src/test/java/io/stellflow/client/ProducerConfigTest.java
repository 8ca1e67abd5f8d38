package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.stellflow.testsupport.LogLines;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code enable.idempotence} as Kafka has it since 3.0 and KIP-679 (issue #20, point 3): on by
 * default with {@code acks=all}; left unset, a conflicting {@code acks}, {@code
 * max.in.flight.requests.per.connection} or {@code retries} turns it off with one INFO line; set to
 * {@code true}, the same conflict is refused naming the keys. {@code delivery.timeout.ms} as Kafka
 * checks it against {@code linger.ms} + {@code request.timeout.ms}: refused when set below, the
 * default raised with one WARN.
 */
class ProducerConfigTest {
    @RegisterExtension
    final LogLines configLog = LogLines.of(ProducerConfig.class).atLevel(Level.INFO);

    private static ProducerConfig from(String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:9092");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return ProducerConfig.from(p);
    }

    @Test
    void defaultsAreIdempotentWithAcksAllFiveInFlightAndUnboundedRetries() {
        ProducerConfig c = from();
        assertThat(c.enableIdempotence()).isTrue();
        assertThat(c.acks()).isEqualTo((short) -1);
        assertThat(c.maxInFlightPerConnection()).isEqualTo(ProducerConfig.MAX_IDEMPOTENT_IN_FLIGHT);
        assertThat(c.common().retries()).isEqualTo(ProducerConfig.DEFAULT_RETRIES);
        assertThat(ProducerConfig.idempotenceConflicts(c)).isEmpty();
        assertThat(configLog.messages()).isEmpty();
    }

    @Test
    void settingsIdempotenceCanWorkWithKeepItOnSilently() {
        assertThat(from("acks", "all", "max.in.flight.requests.per.connection", "1", "retries", "1")
                        .enableIdempotence())
                .isTrue();
        assertThat(from("acks", "-1", "max.in.flight.requests.per.connection", "5")
                        .enableIdempotence())
                .isTrue();
        assertThat(from("enable.idempotence", "TRUE", "acks", "all", "retries", "3")
                        .enableIdempotence())
                .isTrue();
        assertThat(configLog.messages()).isEmpty();
    }

    @Test
    void explicitFalseTurnsItOffWhateverElseIsSet() {
        assertThat(from("enable.idempotence", "false").enableIdempotence()).isFalse();
        ProducerConfig c = from(
                "enable.idempotence",
                "False",
                "acks",
                "0",
                "max.in.flight.requests.per.connection",
                "6",
                "retries",
                "0");
        assertThat(c.enableIdempotence()).isFalse();
        assertThat(c.acks()).isEqualTo((short) 0);
        assertThat(c.maxInFlightPerConnection()).isEqualTo(6);
        assertThat(c.common().retries()).isZero();
        assertThat(configLog.messages()).isEmpty();
    }

    @Test
    void unsetAndAcksOtherThanAllTurnsItOffWithOneInfoLine() {
        ProducerConfig one = from("acks", "1");
        assertThat(one.enableIdempotence()).isFalse();
        assertThat(one.acks()).isEqualTo((short) 1);
        assertThat(from("acks", "0").enableIdempotence()).isFalse();
        assertThat(configLog.at(Level.INFO)).hasSize(2);
        assertThat(configLog.messages())
                .containsExactly(
                        "enable.idempotence not set: the producer is not idempotent (a retry may write a batch"
                                + " twice) since idempotence needs acks=all (-1), not acks=1: set acks=all or"
                                + " enable.idempotence=false",
                        "enable.idempotence not set: the producer is not idempotent (a retry may write a batch"
                                + " twice) since idempotence needs acks=all (-1), not acks=0: set acks=all or"
                                + " enable.idempotence=false");
    }

    @Test
    void unsetAndMoreThanFiveInFlightTurnsItOff() {
        ProducerConfig c = from("max.in.flight.requests.per.connection", "6");
        assertThat(c.enableIdempotence()).isFalse();
        assertThat(c.maxInFlightPerConnection()).isEqualTo(6);
        assertThat(configLog.messages())
                .singleElement()
                .asString()
                .endsWith("idempotence needs max.in.flight.requests.per.connection <= 5, not 6: lower it or set"
                        + " enable.idempotence=false");
    }

    @Test
    void unsetAndRetriesZeroTurnsItOff() {
        ProducerConfig c = from("retries", "0");
        assertThat(c.enableIdempotence()).isFalse();
        assertThat(c.common().retries()).isZero();
        assertThat(configLog.messages())
                .singleElement()
                .asString()
                .endsWith("idempotence needs retries > 0, not retries=0: raise it or set enable.idempotence=false");
    }

    @Test
    void unsetWithSeveralConflictsNamesThemAllInOneLine() {
        ProducerConfig c = from("acks", "1", "max.in.flight.requests.per.connection", "10", "retries", "0");
        assertThat(c.enableIdempotence()).isFalse();
        assertThat(configLog.messages()).singleElement().asString().contains("not acks=1", "not 10", "not retries=0");
    }

    @Test
    void explicitTrueWithAConflictIsRefusedNamingTheKeys() {
        assertThatThrownBy(() -> from("enable.idempotence", "true", "acks", "1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("enable.idempotence=true needs acks=all (-1), not acks=1: set acks=all or"
                        + " enable.idempotence=false");
        assertThatThrownBy(() -> from("enable.idempotence", "true", "acks", "0"))
                .hasMessageStartingWith("enable.idempotence=true needs acks=all (-1), not acks=0");
        assertThatThrownBy(() -> from("enable.idempotence", "true", "max.in.flight.requests.per.connection", "6"))
                .hasMessage("enable.idempotence=true needs max.in.flight.requests.per.connection <= 5, not 6: lower"
                        + " it or set enable.idempotence=false");
        assertThatThrownBy(() -> from("enable.idempotence", "true", "retries", "0"))
                .hasMessage("enable.idempotence=true needs retries > 0, not retries=0: raise it or set"
                        + " enable.idempotence=false");
        assertThatThrownBy(() -> from("enable.idempotence", "true", "acks", "1", "retries", "0"))
                .hasMessage("enable.idempotence=true needs acks=all (-1), not acks=1: set acks=all or"
                        + " enable.idempotence=false; retries > 0, not retries=0: raise it or set"
                        + " enable.idempotence=false");
        assertThatThrownBy(() -> from("enable.idempotence", "yes"))
                .hasMessage("invalid value for enable.idempotence: 'yes' (true or false)");
        assertThat(configLog.messages()).isEmpty();
    }

    @Test
    void aTransactionalIdImpliesIdempotenceAndRefusesWhatConflictsWithIt() {
        ProducerConfig c = from("transactional.id", "orders-tx", "transaction.timeout.ms", "15000");
        assertThat(c.transactionalId()).isEqualTo("orders-tx");
        assertThat(c.transactionTimeoutMs()).isEqualTo(15_000);
        assertThat(c.enableIdempotence()).isTrue();
        assertThat(from().transactionalId()).isNull();
        assertThat(from().transactionTimeoutMs()).isEqualTo(60_000);
        assertThatThrownBy(() -> from("transactional.id", "tx", "enable.idempotence", "false"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("transactional.id=tx needs idempotence, not enable.idempotence=false: remove"
                        + " enable.idempotence or transactional.id");
        // unlike a plain producer, a transactional one does not turn idempotence off on a conflict
        assertThatThrownBy(() -> from("transactional.id", "tx", "acks", "1"))
                .hasMessage("transactional.id=tx implies enable.idempotence=true, which needs acks=all (-1), not"
                        + " acks=1: set acks=all or enable.idempotence=false");
        assertThatThrownBy(() -> from("transactional.id", " "))
                .hasMessage("transactional.id is empty: give an id or leave the key out");
        assertThatThrownBy(() -> from("transactional.id", "tx", "transaction.timeout.ms", "0"))
                .hasMessageContaining("transaction.timeout.ms");
        assertThat(configLog.messages()).isEmpty();
    }

    @Test
    void deliveryTimeoutSetBelowLingerPlusRequestTimeoutIsRefusedNamingTheThreeValues() {
        assertThatThrownBy(
                        () -> from("delivery.timeout.ms", "30000", "linger.ms", "100", "request.timeout.ms", "30000"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("delivery.timeout.ms=30000 must be >= linger.ms + request.timeout.ms = 100 + 30000 = 30100:"
                        + " raise delivery.timeout.ms, or lower linger.ms or request.timeout.ms");
        // The defaults count too: linger.ms 5, request.timeout.ms 30000.
        assertThatThrownBy(() -> from("delivery.timeout.ms", "30004"))
                .hasMessageStartingWith(
                        "delivery.timeout.ms=30004 must be >= linger.ms + request.timeout.ms = 5 + 30000");
        assertThat(from("delivery.timeout.ms", "30005").deliveryTimeoutMs()).isEqualTo(30_005);
        assertThat(from("delivery.timeout.ms", "1500", "linger.ms", "0", "request.timeout.ms", "500")
                        .deliveryTimeoutMs())
                .isEqualTo(1500);
        assertThat(configLog.messages()).isEmpty();
    }

    @Test
    void theDefaultDeliveryTimeoutBelowLingerPlusRequestTimeoutIsRaisedToItWithOneWarn() {
        assertThat(from().deliveryTimeoutMs()).isEqualTo(ProducerConfig.DEFAULT_DELIVERY_TIMEOUT_MS);
        assertThat(from("linger.ms", "60000").deliveryTimeoutMs()).isEqualTo(120_000);
        assertThat(configLog.messages()).isEmpty();

        ProducerConfig c = from("linger.ms", "100000", "request.timeout.ms", "40000");
        assertThat(c.deliveryTimeoutMs()).isEqualTo(140_000);
        assertThat(configLog.at(Level.WARN))
                .singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage())
                        .isEqualTo("delivery.timeout.ms not set, and its default 120000 is below linger.ms +"
                                + " request.timeout.ms = 100000 + 40000: using delivery.timeout.ms=140000"));
    }
}
