package io.stellflow.broker.replication;

import io.stellflow.broker.BrokerChildJvm;
import io.stellflow.broker.TestTransports;
import io.stellflow.client.HostPort;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.TempDirs;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A cluster for fault tests on 127.0.0.1: one in-process controller and {@code n} brokers, each a
 * child JVM ({@code process.roles=broker}) that can be killed with SIGKILL, stopped with SIGTERM,
 * frozen with SIGSTOP/SIGCONT, restarted, and cut from the others ({@link NetworkFaults}: every
 * broker advertises a proxy port, and reaches the controller through a proxy of its own).
 *
 * <p>One controller voter, not three: a broker's connections to a controller quorum would follow
 * NOT_CONTROLLER redirects to the leader's real address, around the proxy; controller failures are
 * the controller module's tests, here the brokers fail.
 *
 * <p>Timeouts are short so faults resolve in seconds: {@link #SESSION_TIMEOUT_MS} to fence a silent
 * broker, heartbeats every 250 ms, {@code replica.lag.time.max.ms} {@link #REPLICA_LAG_MS}. Data and
 * child logs ({@code broker-<id>.log}) live under {@link #dir}. Each broker keeps one transport
 * across restarts, rotated over nio, epoll and io_uring ({@link TestTransports}): faults hit leaders
 * and followers on every transport, and followers fetch across transports.
 *
 * <p>Thread-safety: broker lifecycle methods from the test thread; {@link #image}, {@link #leaderOf},
 * {@link #address} from any thread.
 */
final class FaultCluster implements AutoCloseable {
    static final long SESSION_TIMEOUT_MS = 2000;
    static final long REPLICA_LAG_MS = 1500;

    final Path dir;
    private final int brokerCount;
    private final Map<String, String> extraBrokerProps;
    private final int controllerPort;
    private ControllerServer controller;
    private final int[] realPorts;
    private final NetworkFaults net;
    private final NetworkFaults.Proxy[] brokerProxies;
    private final NetworkFaults.Proxy[] controllerProxies;
    private final Process[] brokers;
    /** The {@code transport} of each broker index. */
    private final String[] transports;

    private final boolean[] frozen;
    /** Broker epoch of each broker's registration before its last start (-1: none). */
    private final long[] epochBeforeStart;

    FaultCluster(Path dir, int brokerCount, Map<String, String> extraBrokerProps) throws IOException {
        this.dir = dir;
        this.brokerCount = brokerCount;
        this.extraBrokerProps = Map.copyOf(extraBrokerProps);
        Files.createDirectories(dir);
        int[] ports = LoopbackPorts.pick(brokerCount + 2);
        this.controllerPort = ports[0];
        int raftPort = ports[1];
        this.realPorts = new int[brokerCount];
        System.arraycopy(ports, 2, realPorts, 0, brokerCount);
        this.brokers = new Process[brokerCount];
        this.transports = TestTransports.forBrokers(brokerCount);
        System.out.println(transports());
        this.frozen = new boolean[brokerCount];
        this.epochBeforeStart = new long[brokerCount];
        this.net = new NetworkFaults(this::pids);
        this.brokerProxies = new NetworkFaults.Proxy[brokerCount];
        this.controllerProxies = new NetworkFaults.Proxy[brokerCount];
        for (int i = 0; i < brokerCount; i++) {
            brokerProxies[i] = net.brokerProxy(i, realPorts[i]);
            controllerProxies[i] = net.controllerProxy(i, controllerPort);
        }
        Properties p = new Properties();
        p.setProperty("node.id", "100");
        p.setProperty("controller.quorum.voters", "100@127.0.0.1:" + raftPort);
        p.setProperty("controller.listener", "127.0.0.1:" + controllerPort);
        p.setProperty("metadata.log.dir", dir.resolve("controller-100").toString());
        p.setProperty("broker.session.timeout.ms", Long.toString(SESSION_TIMEOUT_MS));
        p.setProperty("controller.quorum.election.timeout.ms", "300");
        p.setProperty("cluster.id", "fault-test");
        controller = ControllerServer.start(ControllerConfig.fromProperties(p));
    }

    /** Broker ids are 1..n; index i is broker id i + 1. */
    static int brokerId(int index) {
        return index + 1;
    }

    static int indexOf(int brokerId) {
        return brokerId - 1;
    }

    int size() {
        return brokerCount;
    }

    /** One line naming each broker's transport: {@code FaultCluster transports: broker 1=nio, ...}. */
    String transports() {
        return TestTransports.describe("FaultCluster", transports, brokerId(0));
    }

    String bootstrapControllers() {
        return "127.0.0.1:" + controllerPort;
    }

    /** The clients' address of broker {@code index}: its proxy (what the broker advertises). */
    HostPort address(int index) {
        return new HostPort("127.0.0.1", brokerProxies[index].port());
    }

    String bootstrapBrokers() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < brokerCount; i++) {
            sb.append(i == 0 ? "" : ",").append("127.0.0.1:").append(brokerProxies[i].port());
        }
        return sb.toString();
    }

    Path logDir(int index) {
        return dir.resolve("broker-" + brokerId(index));
    }

    MetadataImage image() {
        return controller.image();
    }

    /** The committed leader's index of {@code topic}-{@code partition}, or -1. */
    int leaderOf(String topic, int partition) {
        TopicImage t = image().topic(topic);
        if (t == null) {
            return -1;
        }
        int leader = t.partition(partition).leader();
        return leader == PartitionImage.NO_LEADER ? -1 : indexOf(leader);
    }

    PartitionImage partition(String topic, int partition) {
        return image().topic(topic).partition(partition);
    }

    void startAll() throws IOException {
        for (int i = 0; i < brokerCount; i++) {
            startBroker(i);
        }
    }

    /** Starts broker {@code i} as a child JVM with this cluster's short timeouts plus the extra properties. */
    void startBroker(int i) throws IOException {
        if (brokers[i] != null) {
            throw new IllegalStateException("broker " + brokerId(i) + " is running");
        }
        int id = brokerId(i);
        BrokerRegistration before = controller.image().broker(id);
        epochBeforeStart[i] = before == null ? -1 : before.brokerEpoch();
        Properties p = new Properties();
        p.setProperty("process.roles", "broker");
        p.setProperty("node.id", Integer.toString(id));
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + realPorts[i]);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerProxies[i].port());
        p.setProperty("log.dirs", logDir(i).toString());
        p.setProperty("cluster.id", "fault-test");
        p.setProperty("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerProxies[i].port());
        p.setProperty("controller.request.timeout.ms", "1500");
        p.setProperty("broker.heartbeat.interval.ms", "250");
        p.setProperty("transport", transports[i]);
        p.setProperty("num.io.threads", "2");
        p.setProperty("num.network.threads", "1");
        p.setProperty("replica.lag.time.max.ms", Long.toString(REPLICA_LAG_MS));
        p.setProperty("replica.fetch.wait.max.ms", "100");
        p.setProperty("replica.fetch.backoff.ms", "100");
        p.setProperty("replica.socket.timeout.ms", "2000"); // a frozen or cut leader is noticed in 2 s
        p.setProperty("min.insync.replicas", "2");
        p.setProperty("log.flush.offset.checkpoint.interval.ms", "500");
        p.setProperty("log.retention.check.interval.ms", "300");
        p.setProperty("log.segment.delete.delay.ms", "0");
        extraBrokerProps.forEach(p::setProperty);
        Path file = dir.resolve("broker-" + id + ".properties");
        try (OutputStream out = Files.newOutputStream(file)) {
            p.store(out, "fault test broker " + id + " on " + transports[i]);
        }
        // Restarts are most of a kill round's time: BrokerChildJvm maps a CDS archive of the first
        // clean exit into every later start.
        brokers[i] = new ProcessBuilder(BrokerChildJvm.command(192, file))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("broker-" + id + ".log").toFile()))
                .start();
        frozen[i] = false;
    }

    boolean running(int i) {
        return brokers[i] != null;
    }

    long pid(int i) {
        Process p = brokers[i];
        return p == null ? -1 : p.pid();
    }

    private long[] pids() {
        long[] out = new long[brokerCount];
        for (int i = 0; i < brokerCount; i++) {
            out[i] = pid(i);
        }
        return out;
    }

    /** SIGKILL, waiting for the process to be gone. */
    void kill9(int i) throws InterruptedException {
        Process p = brokers[i];
        if (p == null) {
            return;
        }
        p.destroyForcibly();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("broker " + brokerId(i) + " survived SIGKILL");
        }
        brokers[i] = null;
        frozen[i] = false;
    }

    /** SIGTERM (the broker's clean shutdown), SIGKILL after 30 s. */
    void stop(int i) throws InterruptedException, IOException {
        Process p = brokers[i];
        if (p == null) {
            return;
        }
        if (frozen[i]) {
            sigcont(i);
        }
        p.destroy();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
        brokers[i] = null;
    }

    void sigstop(int i) throws IOException, InterruptedException {
        signal(i, "STOP");
        frozen[i] = true;
    }

    void sigcont(int i) throws IOException, InterruptedException {
        signal(i, "CONT");
        frozen[i] = false;
    }

    boolean frozen(int i) {
        return frozen[i];
    }

    private void signal(int i, String sig) throws IOException, InterruptedException {
        long pid = pid(i);
        if (pid < 0) {
            throw new IllegalStateException("broker " + brokerId(i) + " is not running");
        }
        Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(pid))
                .redirectErrorStream(true)
                .start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + sig + " " + pid + " failed: "
                    + new String(kill.getInputStream().readAllBytes()));
        }
    }

    /** Cuts broker {@code i} from the other brokers and the controller (and test clients if asked). */
    void isolate(int i, boolean clientsToo) {
        net.isolate(i, clientsToo);
    }

    void heal() {
        net.heal();
    }

    int isolated() {
        return net.isolated();
    }

    /**
     * Undoes whatever a previous test left: the cut healed, frozen brokers continued, stopped ones
     * started; then waits until all are unfenced.
     */
    void restoreAll() throws IOException, InterruptedException {
        heal();
        for (int i = 0; i < brokerCount; i++) {
            if (brokers[i] != null && frozen[i]) {
                sigcont(i);
            }
            if (brokers[i] == null) {
                startBroker(i);
            }
        }
        awaitUnfenced(60_000);
    }

    /** Creates a topic at the controller with topic configs (e.g. {@code min.insync.replicas}). */
    void createTopic(String name, int partitions, int replicationFactor, Map<String, String> configs) {
        try (ControllerClient client = ControllerClient.builder(bootstrapControllers())
                .requestTimeout(Duration.ofSeconds(20))
                .build()) {
            CreateTopicsResponse r = client.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(name)
                            .setNumPartitions(partitions)
                            .setReplicationFactor(replicationFactor)
                            .putAllConfig(configs))
                    .build());
            if (r.getError() != ErrorCode.NONE || r.getTopics(0).getError() != ErrorCode.NONE) {
                throw new IllegalStateException("CreateTopics " + name + " failed: " + r);
            }
        }
    }

    /**
     * Waits until every running, unfrozen broker is registered and unfenced, a restarted one with a
     * registration newer than the one before its restart.
     */
    void awaitUnfenced(long timeoutMs) throws InterruptedException {
        await(timeoutMs, "running brokers unfenced", this::runningBrokersUnfenced);
    }

    boolean runningBrokersUnfenced() {
        MetadataImage img = image();
        for (int i = 0; i < brokerCount; i++) {
            BrokerRegistration b = img.broker(brokerId(i));
            if (brokers[i] != null
                    && !frozen[i]
                    && (b == null || b.fenced() || b.brokerEpoch() <= epochBeforeStart[i])) {
                return false;
            }
        }
        return true;
    }

    /**
     * Waits until every running broker is registered under its new incarnation and unfenced, then
     * until every partition of {@code topic} has a full ISR. Checking the ISR alone right after a
     * restart can pass on the old image: the ISR has not shrunk yet, and the restarted broker's
     * registration (which removes it from every ISR) is still to come.
     */
    void awaitRejoined(String topic, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        awaitUnfenced(timeoutMs);
        long leftMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        await(leftMs, "a full ISR of " + topic, () -> fullIsr(topic));
    }

    /** True when every partition of {@code topic} has a leader and all its replicas in the ISR. */
    boolean fullIsr(String topic) {
        TopicImage t = image().topic(topic);
        if (t == null) {
            return false;
        }
        for (PartitionImage p : t.partitions()) {
            if (p.leader() == PartitionImage.NO_LEADER
                    || p.isr().size() != p.replicas().size()) {
                return false;
            }
        }
        return true;
    }

    /** True when every partition of {@code topic} has a leader. */
    boolean allLed(String topic) {
        TopicImage t = image().topic(topic);
        if (t == null) {
            return false;
        }
        for (PartitionImage p : t.partitions()) {
            if (p.leader() == PartitionImage.NO_LEADER) {
                return false;
            }
        }
        return true;
    }

    /** The last {@code lines} lines of broker {@code i}'s log (for failure messages). */
    String logTail(int i, int lines) {
        try {
            List<String> all = Files.readAllLines(dir.resolve("broker-" + brokerId(i) + ".log"));
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    static void await(long timeoutMs, String what, BooleanSupplier condition) throws InterruptedException {
        Wait.until(Duration.ofMillis(timeoutMs), condition, what);
    }

    /** Polls {@code condition} up to {@code timeoutMs} ({@link Wait#poll}); whether it became true. */
    static boolean poll(long timeoutMs, BooleanSupplier condition) throws InterruptedException {
        return Wait.poll(Duration.ofMillis(timeoutMs), condition, "a FaultCluster.poll condition");
    }

    /** Deletes {@code dir} and everything under it (nothing when it does not exist). */
    static void deleteRecursively(Path dir) throws IOException {
        TempDirs.deleteRecursively(dir);
    }

    @Override
    public void close() {
        net.heal();
        for (int i = 0; i < brokerCount; i++) {
            Process p = brokers[i];
            if (p != null) {
                p.destroyForcibly();
                try {
                    p.waitFor(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                brokers[i] = null;
            }
        }
        net.close();
        if (controller != null) {
            controller.close();
            controller = null;
        }
    }
}
