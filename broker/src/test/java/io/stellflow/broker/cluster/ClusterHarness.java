package io.stellflow.broker.cluster;

import io.stellflow.broker.BrokerChildJvm;
import io.stellflow.broker.TestTransports;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A cluster on 127.0.0.1 for tests: {@code controllers} in-process controller-only nodes and
 * {@code brokers} brokers, each a child JVM ({@code process.roles=broker}) so a test can kill -9 one.
 * Ports are allocated up front (bind, close, reuse), data under one temp dir, child logs in
 * {@code <dir>/broker-<id>.log}. Each broker keeps one transport across restarts, rotated over nio,
 * epoll and io_uring ({@link TestTransports}), so leaders and followers of every test run on all three.
 */
final class ClusterHarness implements AutoCloseable {
    static final long SESSION_TIMEOUT_MS = 3000;

    final Path dir;
    final List<ControllerConfig> controllerConfigs = new ArrayList<>();
    final ControllerServer[] controllers;
    final int[] brokerPorts;
    final Process[] brokers;
    /** The {@code transport} of each broker index. */
    final String[] transports;

    final String bootstrapControllers;
    final NetworkClient network;
    /** Extra broker properties a test sets before starting brokers (applied last). */
    final Properties brokerOverrides = new Properties();

    ClusterHarness(Path dir, int controllerCount, int brokerCount) throws IOException {
        this.dir = dir;
        int[] raft = LoopbackPorts.pick(controllerCount);
        int[] rpc = LoopbackPorts.pick(controllerCount);
        StringBuilder voters = new StringBuilder();
        StringBuilder bootstrap = new StringBuilder();
        for (int i = 0; i < controllerCount; i++) {
            voters.append(i == 0 ? "" : ",")
                    .append(100 + i)
                    .append("@127.0.0.1:")
                    .append(raft[i]);
            bootstrap.append(i == 0 ? "" : ",").append("127.0.0.1:").append(rpc[i]);
        }
        bootstrapControllers = bootstrap.toString();
        controllers = new ControllerServer[controllerCount];
        for (int i = 0; i < controllerCount; i++) {
            Properties p = new Properties();
            p.setProperty("node.id", Integer.toString(100 + i));
            p.setProperty("controller.quorum.voters", voters.toString());
            p.setProperty("controller.listener", "127.0.0.1:" + rpc[i]);
            p.setProperty(
                    "metadata.log.dir", dir.resolve("controller-" + (100 + i)).toString());
            p.setProperty("broker.session.timeout.ms", Long.toString(SESSION_TIMEOUT_MS));
            p.setProperty("controller.quorum.election.timeout.ms", "300");
            p.setProperty("cluster.id", "cluster-test");
            controllerConfigs.add(ControllerConfig.fromProperties(p));
        }
        brokerPorts = LoopbackPorts.pick(brokerCount);
        brokers = new Process[brokerCount];
        transports = TestTransports.forBrokers(brokerCount);
        System.out.println(TestTransports.describe("ClusterHarness", transports, brokerId(0)));
        Properties cp = new Properties();
        cp.setProperty("bootstrap.servers", "127.0.0.1:" + brokerPorts[0]);
        cp.setProperty("request.timeout.ms", "5000");
        network = new NetworkClient(ClientConfig.from(cp, "cluster-test"));
    }

    /** Broker ids are 1..n. */
    static int brokerId(int index) {
        return index + 1;
    }

    /** The index of broker id {@code id} (ids are 1..n). */
    static int brokerIndexOf(int id) {
        return id - 1;
    }

    void startControllers() throws IOException {
        for (int i = 0; i < controllers.length; i++) {
            startController(i);
        }
    }

    void startController(int i) throws IOException {
        controllers[i] = ControllerServer.start(controllerConfigs.get(i));
    }

    void stopController(int i) {
        if (controllers[i] != null) {
            controllers[i].close();
            controllers[i] = null;
        }
    }

    /** The image of a running controller that has applied the most entries. */
    MetadataImage controllerImage() {
        MetadataImage best = null;
        for (ControllerServer c : controllers) {
            if (c != null && (best == null || c.image().offset() > best.offset())) {
                best = c.image();
            }
        }
        return best;
    }

    void startBrokers() throws IOException {
        for (int i = 0; i < brokers.length; i++) {
            startBroker(i);
        }
    }

    /** Starts broker {@code i} as a child JVM ({@code bin/stellflow-server.sh} would run the same main). */
    void startBroker(int i) throws IOException {
        int id = brokerId(i);
        Properties p = new Properties();
        p.setProperty("process.roles", "broker");
        p.setProperty("node.id", Integer.toString(id));
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + brokerPorts[i]);
        p.setProperty("log.dirs", dir.resolve("broker-" + id).toString());
        p.setProperty("cluster.id", "cluster-test");
        p.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
        p.setProperty("broker.heartbeat.interval.ms", "500");
        // acks=-1 waits for the ISR: a follower that does not fetch leaves it after 1 s, not 30 s.
        p.setProperty("replica.lag.time.max.ms", "1000");
        p.setProperty("transport", transports[i]);
        p.setProperty("num.io.threads", "4");
        p.setProperty("num.network.threads", "2");
        p.putAll(brokerOverrides);
        Path file = dir.resolve("broker-" + id + ".properties");
        try (OutputStream out = Files.newOutputStream(file)) {
            p.store(out, "cluster test broker " + id + " on " + transports[i]);
        }
        brokers[i] = new ProcessBuilder(BrokerChildJvm.command(256, file))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("broker-" + id + ".log").toFile()))
                .start();
    }

    /** kill -9. */
    void killBroker(int i) throws InterruptedException {
        brokers[i].destroyForcibly();
        brokers[i].waitFor(30, TimeUnit.SECONDS);
        brokers[i] = null;
    }

    /** SIGTERM: the broker's clean shutdown (want-fence heartbeat, logs closed). */
    void stopBroker(int i) throws InterruptedException {
        if (brokers[i] == null) {
            return;
        }
        brokers[i].destroy();
        if (!brokers[i].waitFor(30, TimeUnit.SECONDS)) {
            brokers[i].destroyForcibly();
            brokers[i].waitFor(30, TimeUnit.SECONDS);
        }
        brokers[i] = null;
    }

    /** Waits until every running broker is registered and unfenced in the controllers' image. */
    void awaitBrokersUnfenced(long timeoutMs) throws InterruptedException {
        await(timeoutMs, "brokers unfenced", () -> {
            MetadataImage img = controllerImage();
            if (img == null) {
                return false;
            }
            for (int i = 0; i < brokers.length; i++) {
                BrokerRegistration b = img.broker(brokerId(i));
                if (brokers[i] != null && (b == null || b.fenced())) {
                    return false;
                }
            }
            return true;
        });
    }

    HostPort broker(int i) {
        return new HostPort("127.0.0.1", brokerPorts[i]);
    }

    /** One Metadata request to broker {@code i} (all topics when {@code topics} is empty). */
    MetadataResponse metadata(int i, List<String> topics) throws Exception {
        MetadataRequest req = new MetadataRequest(topics, false, false, false);
        return network.send(broker(i), ApiKeys.METADATA, req::write, MetadataResponse::read)
                .get(10, TimeUnit.SECONDS);
    }

    String bootstrapBrokers() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < brokerPorts.length; i++) {
            sb.append(i == 0 ? "" : ",").append("127.0.0.1:").append(brokerPorts[i]);
        }
        return sb.toString();
    }

    static void await(long timeoutMs, String what, BooleanSupplier condition) throws InterruptedException {
        Wait.until(Duration.ofMillis(timeoutMs), condition, what);
    }

    @Override
    public void close() throws Exception {
        network.close();
        for (int i = 0; i < brokers.length; i++) {
            if (brokers[i] != null) {
                brokers[i].destroyForcibly();
                brokers[i].waitFor(30, TimeUnit.SECONDS);
                brokers[i] = null;
            }
        }
        for (int i = 0; i < controllers.length; i++) {
            stopController(i);
        }
    }
}
