package io.stellflow.client;

import io.stellflow.broker.TestTransports;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The single combined broker the transactional client tests of this package start: NIO on an
 * ephemeral port, one partition each for {@code __consumer_offsets} and {@code __transaction_state}
 * (so one coordinator answers the group and the transactional id). Skips the test (assumption) when
 * the run selected another transport.
 */
final class TxnBrokerProps {
    private TxnBrokerProps() {}

    /** The broker's properties, its log directory under {@code dir}. */
    static Properties of(Path dir) {
        TestTransports.assumeSelected("nio");
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("transport", "nio");
        p.setProperty("num.network.threads", "2");
        p.setProperty("num.io.threads", "4");
        p.setProperty("metrics.port", "0");
        p.setProperty("controller.quorum.election.timeout.ms", "100");
        p.setProperty("offsets.topic.num.partitions", "1");
        p.setProperty("transaction.state.log.num.partitions", "1");
        return p;
    }
}
