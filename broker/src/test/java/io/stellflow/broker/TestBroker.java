package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.testsupport.TempDirs;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts brokers for tests as users run a single node: a combined node (the default {@code
 * process.roles=broker,controller}: the broker with its embedded one-voter controller) on 127.0.0.1,
 * ephemeral ports (data plane, Raft, control plane and metrics), a given transport. Topics come from
 * the controller like everywhere else; {@link #createTopic} creates one with topic configs through
 * the control plane (CreateTopic on the wire carries none).
 *
 * <p>Layout under a test's dir: the log dir {@code <dir>/data} ({@link #logDir}) and, as the default
 * {@code metadata.log.dir}, its sibling {@code <dir>/data-metadata}. A restart on the same dir finds
 * both.
 *
 * <p>Cost: a combined node starts in about 0.3 s (mostly its Raft election) and closes in about 1 s
 * (Ratis's log worker notices the close only at its next 1 s poll). So tests that need no fresh
 * state share one node per transport ({@link Shared}), and the nodes a test starts for itself
 * ({@link Own}) are closed off the test thread after the test, while the next ones run; a failed
 * close fails the next class that ends (and the JVM waits for the last ones before it exits). The
 * multi-node cluster tests live in {@code io.stellflow.broker.cluster}.
 */
final class TestBroker {
    /** Closes nodes (and deletes their dirs) in the background, while later tests run. */
    private static final ExecutorService CLOSER = Executors.newCachedThreadPool(
            Thread.ofPlatform().daemon().name("test-node-closer-", 0).factory());

    /** The background closes not yet checked for a failure. */
    private static final ConcurrentLinkedQueue<Future<?>> CLOSING = new ConcurrentLinkedQueue<>();

    static {
        // The test JVM's last closes finish (and their dirs go) before it exits.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            CLOSER.shutdown();
            try {
                CLOSER.awaitTermination(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
    }

    private TestBroker() {}

    /**
     * Properties for a combined node with its data under {@code dir} on {@code transport}; skips the
     * calling test when that transport is unavailable here or not selected by {@code
     * -Dstellflow.test.transports} ({@link TestTransports#assumeSelected}).
     */
    static Properties props(Path dir, String transport) {
        TestTransports.assumeSelected(transport);
        Properties props = new Properties();
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        props.setProperty("log.dirs", logDir(dir).toString());
        props.setProperty("transport", transport);
        props.setProperty("num.network.threads", "2");
        props.setProperty("num.io.threads", "4");
        // An ephemeral metrics port: parallel test JVMs never fight over 9464.
        props.setProperty("metrics.port", "0");
        // The one voter elects itself after this (default 1 s): most of a node's start time.
        props.setProperty("controller.quorum.election.timeout.ms", "100");
        return props;
    }

    /** The log dir of a broker started with {@link #props}{@code (dir, ...)}. */
    static Path logDir(Path dir) {
        return dir.resolve("data");
    }

    static StellflowServer start(Path dir, String transport) throws IOException {
        return start(props(dir, transport));
    }

    /**
     * Starts a node and, after a restart, waits until it leads its partitions again: the controller
     * elects it only once it is unfenced, a moment after {@code start} returned (a client would retry
     * LEADER_NOT_AVAILABLE; the raw clients of these tests do not).
     */
    static StellflowServer start(Properties props) throws IOException {
        StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(props));
        MetadataImage led;
        try {
            led = server.replicaManager().awaitImage(i -> leadsEverything(i, server.brokerId()), 10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            led = null;
        }
        if (led == null) {
            server.close();
            throw new AssertionError("node " + server.brokerId() + " does not lead its partitions 10 s after start");
        }
        return server;
    }

    private static boolean leadsEverything(MetadataImage image, int brokerId) {
        for (TopicImage t : image.topicsByName().values()) {
            for (PartitionImage p : t.partitions()) {
                if (p.leader() != brokerId) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The partition {@code server} hosts, or null. */
    static Partition partition(StellflowServer server, String topic, int partition) {
        return server.replicaManager().hostedPartition(topic, partition);
    }

    /** The topic in {@code server}'s applied metadata, or null. */
    static TopicImage topic(StellflowServer server, String topic) {
        return server.replicaManager().image().topic(topic);
    }

    /**
     * Creates {@code topic} with topic config overrides through {@code server}'s embedded controller
     * (CreateTopics on the control plane, as {@code stellflow-topics.sh --bootstrap-controller
     * --config} does) and waits until the broker hosts every partition.
     *
     * @return the controller's answer for the topic ({@code NONE}, or why it refused)
     */
    static ErrorCode createTopic(StellflowServer server, String topic, int partitions, Map<String, String> config)
            throws InterruptedException {
        CreateTopicsResponse r;
        try (ControllerClient controller =
                ControllerClient.builder(server.controller().rpcEndpoint()).build()) {
            r = controller.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(topic)
                            .setNumPartitions(partitions)
                            .setReplicationFactor(1)
                            .putAllConfig(config))
                    .build());
        }
        assertThat(r.getError()).as("CreateTopics " + topic).isEqualTo(ErrorCode.NONE);
        ErrorCode error = r.getTopics(0).getError();
        if (error == ErrorCode.NONE) {
            MetadataImage image = server.replicaManager().awaitImage(i -> hostsAll(server, topic, partitions), 10_000);
            assertThat(image).as("topic " + topic + " applied").isNotNull();
        }
        return error;
    }

    private static boolean hostsAll(StellflowServer server, String topic, int partitions) {
        for (int p = 0; p < partitions; p++) {
            Partition partition = partition(server, topic, p);
            if (partition == null || !partition.isLeader()) {
                return false;
            }
        }
        return true;
    }

    /**
     * The nodes tests start for themselves ({@code @RegisterExtension static final TestBroker.Own
     * NODES = ...}): each test gets a fresh data dir ({@link #dir}); after the test its nodes are
     * closed and the dir deleted in the background ({@link TestBroker}). A test may close a node
     * itself, for example to restart it on the same dir; closing again is a no-op.
     */
    static final class Own implements AfterEachCallback, AfterAllCallback {
        private final List<StellflowServer> started = new ArrayList<>();
        private Path dir;

        /** This test's data dir, created on first use, deleted after the test's nodes closed. */
        synchronized Path dir() throws IOException {
            if (dir == null) {
                dir = TempDirs.create("sf-test-node-");
            }
            return dir;
        }

        /** A node with {@link #props}{@code (dir(), transport)}. */
        StellflowServer start(String transport) throws IOException {
            return start(props(dir(), transport));
        }

        /** A node with {@link #props}{@code (dir, transport)}; {@code dir} should be under {@link #dir}. */
        StellflowServer start(Path dir, String transport) throws IOException {
            return start(props(dir, transport));
        }

        /** A node with {@code props} (whose dirs should be under {@link #dir}). */
        StellflowServer start(Properties props) throws IOException {
            return track(TestBroker.start(props));
        }

        /** Closes {@code server} after the test like the nodes started here. */
        synchronized StellflowServer track(StellflowServer server) {
            started.add(server);
            return server;
        }

        @Override
        public synchronized void afterEach(ExtensionContext context) {
            List<StellflowServer> servers = List.copyOf(started);
            Path d = dir;
            started.clear();
            dir = null;
            if (servers.isEmpty() && d == null) {
                return;
            }
            closeInBackground(servers, d);
        }

        @Override
        public void afterAll(ExtensionContext context) throws Exception {
            checkBackgroundCloses();
        }
    }

    /** Closes {@code servers} in order, then deletes {@code dir} (if not null), off this thread. */
    private static void closeInBackground(List<StellflowServer> servers, Path dir) {
        CLOSING.add(CLOSER.submit(() -> {
            for (StellflowServer server : servers) {
                server.close();
            }
            if (dir != null) {
                TempDirs.deleteRecursively(dir);
            }
            return null;
        }));
    }

    /** Throws the failure of a finished background close, if any; never waits for a running one. */
    private static void checkBackgroundCloses() throws InterruptedException, ExecutionException {
        for (Future<?> f : CLOSING) {
            if (f.isDone()) {
                CLOSING.remove(f);
                f.get();
            }
        }
    }

    /**
     * One combined node per transport shared by every test of a class, started on first use and closed
     * after the class ({@code @RegisterExtension static final TestBroker.Shared BROKERS = ...}), each
     * in its own temp dir. For tests that need no fresh broker state, restart or specific broker
     * config: they must use topics of their own (for example named after the test method).
     */
    static final class Shared implements AfterAllCallback {
        private final Consumer<Properties> config;
        private final Map<String, StellflowServer> servers = new LinkedHashMap<>();
        private final Map<String, Path> dirs = new LinkedHashMap<>();

        /** Nodes with {@link #props}. */
        Shared() {
            this(p -> {});
        }

        /** Nodes with {@link #props} changed by {@code config} (the same for every test of the class). */
        Shared(Consumer<Properties> config) {
            this.config = config;
        }

        /**
         * The node on {@code transport}, started now if this class has none yet; skips the calling test
         * as {@link #props} does.
         */
        synchronized StellflowServer get(String transport) throws IOException {
            StellflowServer server = servers.get(transport);
            if (server == null) {
                Properties props = props(Path.of("unused"), transport); // skips an unselected transport first
                Path dir = TempDirs.create("sf-shared-" + transport + "-");
                props.setProperty("log.dirs", logDir(dir).toString());
                config.accept(props);
                try {
                    server = start(props);
                } catch (IOException | RuntimeException e) {
                    TempDirs.deleteRecursively(dir);
                    throw e;
                }
                dirs.put(transport, dir);
                servers.put(transport, server);
            }
            return server;
        }

        /** Closes the nodes in the background (each close waits about 1 s for Ratis), then their dirs. */
        @Override
        public synchronized void afterAll(ExtensionContext context) throws Exception {
            for (Map.Entry<String, StellflowServer> e : servers.entrySet()) {
                closeInBackground(List.of(e.getValue()), dirs.get(e.getKey()));
            }
            servers.clear();
            dirs.clear();
            checkBackgroundCloses();
        }
    }
}
