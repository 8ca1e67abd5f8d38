package io.stellflow.tools;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.server.ControllerServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The tools' tests' replicated cluster: one dedicated controller and two broker-only nodes (ids 1 and
 * 2) in this JVM on fixed loopback ports, so a broker restarted with {@link #restart} keeps its
 * address and its data under {@code <dir>/b<id>}. NIO transport, no metrics exporter, fast heartbeats
 * and replica fetches. The caller closes it.
 */
final class TwoBrokerCluster implements AutoCloseable {
    private final Path dir;
    private final ControllerServer controller;
    private final String bootstrapControllers;
    private final int[] ports = LoopbackPorts.pick(2);
    private final StellflowServer[] brokers = new StellflowServer[2];

    TwoBrokerCluster(Path dir) throws IOException {
        this.dir = dir;
        int[] raft = LoopbackPorts.pick(1);
        bootstrapControllers = "127.0.0.1:" + LoopbackPorts.pick(1)[0];
        Properties cp = new Properties();
        cp.setProperty("node.id", "100");
        cp.setProperty("controller.quorum.voters", "100@127.0.0.1:" + raft[0]);
        cp.setProperty("controller.listener", bootstrapControllers);
        cp.setProperty("metadata.log.dir", dir.resolve("controller").toString());
        cp.setProperty("broker.session.timeout.ms", "3000");
        cp.setProperty("controller.quorum.election.timeout.ms", "300");
        cp.setProperty("cluster.id", "tools-test");
        controller = ControllerServer.start(ControllerConfig.fromProperties(cp));
        try {
            for (int id = 1; id <= 2; id++) {
                start(id);
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** {@code host:port} of broker {@code id}'s data plane. */
    String broker(int id) {
        return "127.0.0.1:" + ports[id - 1];
    }

    /** Broker {@code id} (1 or 2), or null while it is stopped. */
    StellflowServer server(int id) {
        return brokers[id - 1];
    }

    /** Stops the controller (the brokers keep serving from their metadata). */
    void stopController() {
        controller.close();
    }

    /** Stops broker {@code id} cleanly (SIGTERM's path). */
    void stop(int id) {
        brokers[id - 1].close();
        brokers[id - 1] = null;
    }

    /** Starts broker {@code id} again on its address and data. */
    void start(int id) throws IOException {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker");
        p.setProperty("node.id", Integer.toString(id));
        p.setProperty("listeners", "PLAINTEXT://" + broker(id));
        p.setProperty("log.dirs", dir.resolve("b" + id).toString());
        p.setProperty("cluster.id", "tools-test");
        p.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
        p.setProperty("broker.heartbeat.interval.ms", "300");
        p.setProperty("transport", "nio");
        p.setProperty("metrics.exporter", "none");
        p.setProperty("num.io.threads", "2");
        p.setProperty("num.network.threads", "1");
        p.setProperty("replica.fetch.backoff.ms", "100");
        p.setProperty("replica.fetch.wait.max.ms", "200");
        brokers[id - 1] = StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    @Override
    public void close() {
        for (int i = 0; i < brokers.length; i++) {
            if (brokers[i] != null) {
                brokers[i].close();
                brokers[i] = null;
            }
        }
        controller.close();
    }
}
