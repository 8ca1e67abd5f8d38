package io.stellflow.broker.cluster;

import io.grpc.StatusRuntimeException;
import io.stellflow.broker.watchdog.Heartbeat;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.MetadataFollower;
import io.stellflow.controller.MetadataListener;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.Endpoint;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker's membership in the cluster: registers with a new incarnation id at start, follows the
 * committed metadata from the last applied offset (0 at start: a full image first), heartbeats every
 * {@code broker.heartbeat.interval.ms} with the applied offset, re-registers when the controller
 * answers {@code STALE_BROKER_EPOCH} (it fenced this broker), and sends a want-fence heartbeat on a
 * clean shutdown so the controller moves leadership away at once instead of after the session
 * timeout. While {@link #fenceWhile}'s condition holds (the thread watchdog found a broker thread
 * stuck) every heartbeat asks to be fenced; the first one without that ask unfences it again.
 *
 * <p>Threads: one heartbeat thread ({@code broker-heartbeat}); metadata is delivered on the
 * follower's thread ({@code metadata-follower}).
 *
 * <p>Thread-safety: {@link #start} once, then {@link #close} from any thread (idempotent).
 *
 * <p>Errors: {@link #start} keeps retrying while no controller is reachable (logged per client
 * request timeout) and throws {@link IllegalStateException} when the controller refuses the
 * registration (for example {@code INCONSISTENT_CLUSTER_ID}: the log dirs belong to another cluster).
 */
public final class BrokerLifecycle implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerLifecycle.class);

    private final int brokerId;
    private final ControllerClient client;
    private final MetadataListener listener;
    private final long heartbeatIntervalMs;
    private final Endpoint endpoint;
    private final String rack;
    private final UUID incarnationId = UUID.randomUUID();
    private volatile String clusterId;
    private volatile long brokerEpoch = -1;
    private volatile boolean fenced = true;
    private volatile boolean closed;
    private MetadataFollower follower;
    private volatile Thread heartbeats;
    private volatile BooleanSupplier wantFence = () -> false;
    /** Beaten once per heartbeat loop iteration (watched for liveness by the thread watchdog). */
    private final Heartbeat heartbeat = new Heartbeat("broker-heartbeat", "BrokerLifecycle", System::nanoTime);

    private volatile Consumer<BrokerHeartbeatRequest.Builder> storageReport = b -> {};

    /**
     * @param brokerId {@code node.id}
     * @param client the control-plane client (owned by the caller)
     * @param listener applies metadata (the {@link ReplicaManager})
     * @param host advertised data-plane host
     * @param port advertised data-plane port
     * @param rack {@code broker.rack}, empty when none
     * @param heartbeatIntervalMs {@code broker.heartbeat.interval.ms}
     * @param clusterId the cluster id this broker's log dirs belong to ({@code meta.properties} or
     *     {@code cluster.id}), or null for a new broker, which adopts the cluster's
     */
    public BrokerLifecycle(
            int brokerId,
            ControllerClient client,
            MetadataListener listener,
            String host,
            int port,
            String rack,
            long heartbeatIntervalMs,
            String clusterId) {
        this.brokerId = brokerId;
        this.clusterId = clusterId;
        this.client = client;
        this.listener = listener;
        this.heartbeatIntervalMs = heartbeatIntervalMs;
        this.endpoint = Endpoint.newBuilder()
                .setName("PLAINTEXT")
                .setHost(host)
                .setPort(port)
                .build();
        this.rack = rack;
    }

    /**
     * Registers, starts following metadata and heartbeating, and waits (up to {@code catchUpTimeout})
     * until the metadata up to this broker's own registration is applied, the controller unfenced it,
     * and the metadata up to that unfencing is applied too. Returns whether all of it happened in time
     * (the broker keeps trying in the background either way).
     */
    public boolean start(Duration catchUpTimeout) throws InterruptedException {
        // Controllers may start after the broker (a cluster's nodes start in any order): keep trying.
        while (true) {
            try {
                register();
                break;
            } catch (ControllerUnavailableException e) {
                if (closed) {
                    throw e;
                }
                LOG.warn("BROKER_WAITING_FOR_CONTROLLERS brokerId={}: {}", brokerId, e.getMessage());
            }
        }
        follower = client.followMetadata(0, listener);
        startHeartbeats();
        long deadlineNs = System.nanoTime() + catchUpTimeout.toNanos();
        boolean caughtUp = follower.awaitOffset(brokerEpoch, catchUpTimeout);
        // Unfenced once the controller sees (in a heartbeat) that this broker applied its own
        // registration: ask at once rather than one heartbeat interval later, so a started broker is
        // eligible for leadership (and topic creation counts it) when start returns.
        long unfencedAtOffset = -1;
        while (caughtUp && unfencedAtOffset < 0 && System.nanoTime() < deadlineNs) {
            try {
                BrokerHeartbeatResponse r = heartbeat(false);
                if (r.getError() == ErrorCode.NONE) {
                    fenced = r.getFenced();
                    if (!fenced) {
                        unfencedAtOffset = r.getCommittedOffset();
                    }
                }
            } catch (ControllerUnavailableException | StatusRuntimeException e) {
                LOG.warn("Heartbeat of broker {} failed: {}", brokerId, e.toString());
            }
            if (unfencedAtOffset < 0) {
                Thread.sleep(50);
            }
        }
        // The controller answers "unfenced" once the unfence record is committed; this broker's own
        // image lists it as unfenced only when it applied that record. Wait for that too, so that a
        // Metadata answered right after start names this broker (and, combined, the controller).
        if (unfencedAtOffset >= 0) {
            long leftNs = Math.max(0, deadlineNs - System.nanoTime());
            caughtUp = follower.awaitOffset(unfencedAtOffset, Duration.ofNanos(leftNs));
        }
        LOG.info(
                "BROKER_JOINED brokerId={} incarnation={} brokerEpoch={} metadataOffset={} caughtUp={} fenced={}",
                brokerId,
                incarnationId,
                brokerEpoch,
                follower.offset(),
                caughtUp,
                fenced);
        return caughtUp && !fenced;
    }

    private void register() {
        RegisterBrokerResponse r = client.registerBroker(RegisterBrokerRequest.newBuilder()
                .setBrokerId(brokerId)
                .setIncarnationId(MetadataRecords.uuid(incarnationId))
                .addListeners(endpoint)
                .setRack(rack)
                .setClusterId(clusterId == null ? "" : clusterId)
                .build());
        if (r.getError() != ErrorCode.NONE) {
            throw new IllegalStateException(
                    "broker " + brokerId + " registration refused: " + r.getError() + " " + r.getErrorMessage());
        }
        clusterId = r.getClusterId();
        brokerEpoch = r.getBrokerEpoch();
        fenced = true;
    }

    private synchronized void startHeartbeats() {
        Thread t = Thread.ofPlatform().name("broker-heartbeat").daemon().unstarted(this::heartbeatLoop);
        heartbeat.attach(t);
        heartbeats = t;
        t.start();
    }

    /**
     * Asks the controller to fence this broker in every heartbeat while {@code condition} holds (the
     * thread watchdog's {@link ThreadWatchdog#fenceWanted}), so leadership moves away from a broker
     * with a stuck thread; once it no longer holds, the next heartbeat unfences it. Any thread.
     */
    public void fenceWhile(BooleanSupplier condition) {
        wantFence = condition;
    }

    /**
     * Registers the heartbeat thread with {@code watchdog} for liveness (its interval may exceed the
     * stall timeout): a thread that ended while this membership is open is replaced by a new one.
     */
    public void watch(ThreadWatchdog watchdog) {
        watchdog.watchLiveness(heartbeat, new ThreadWatchdog.Owner() {
            @Override
            public boolean closed() {
                return closed;
            }

            @Override
            public boolean restart() {
                synchronized (BrokerLifecycle.this) {
                    if (closed) {
                        return false;
                    }
                    Thread t = heartbeats;
                    if (t == null || !t.isAlive()) {
                        startHeartbeats();
                    }
                    return true;
                }
            }
        });
    }

    private void heartbeatLoop() {
        while (!closed) {
            heartbeat.beat();
            try {
                Thread.sleep(heartbeatIntervalMs);
            } catch (InterruptedException e) {
                return;
            }
            if (closed) {
                return;
            }
            try {
                boolean fenceWanted = wantFence.getAsBoolean();
                BrokerHeartbeatResponse r = heartbeat(fenceWanted);
                if (r.getError() == ErrorCode.STALE_BROKER_EPOCH
                        || r.getError() == ErrorCode.BROKER_ID_NOT_REGISTERED) {
                    LOG.warn("BROKER_REREGISTER brokerId={} reason={}", brokerId, r.getError());
                    register();
                } else if (r.getError() == ErrorCode.NONE) {
                    if (fenced != r.getFenced()) {
                        LOG.info(
                                "BROKER_{} brokerId={} brokerEpoch={} wantFence={}",
                                r.getFenced() ? "FENCED" : "UNFENCED",
                                brokerId,
                                brokerEpoch,
                                fenceWanted);
                    }
                    fenced = r.getFenced();
                } else {
                    LOG.warn("Heartbeat of broker {} answered {}: {}", brokerId, r.getError(), r.getErrorMessage());
                }
            } catch (ControllerUnavailableException | StatusRuntimeException | IllegalStateException e) {
                if (!closed) {
                    LOG.warn("Heartbeat of broker {} failed: {}", brokerId, e.toString());
                }
            }
        }
    }

    private BrokerHeartbeatResponse heartbeat(boolean wantFence) {
        BrokerHeartbeatRequest.Builder b = BrokerHeartbeatRequest.newBuilder()
                .setBrokerId(brokerId)
                .setBrokerEpoch(brokerEpoch)
                .setMetadataOffset(follower == null ? 0 : follower.offset())
                .setWantFence(wantFence);
        storageReport.accept(b);
        return client.brokerHeartbeat(b.build());
    }

    /**
     * Adds this broker's storage state to every heartbeat from now on: its failed replicas and
     * whether a log dir can take a new partition (issue #23). Set before {@link #start}.
     */
    public void storageReport(Consumer<BrokerHeartbeatRequest.Builder> report) {
        this.storageReport = report;
    }

    /** The cluster's id as the controller confirmed it at registration (null before). */
    public String clusterId() {
        return brokerEpoch < 0 ? null : clusterId;
    }

    /** The broker epoch of the current registration (-1 before). */
    public long brokerEpoch() {
        return brokerEpoch;
    }

    /** Whether the controller last reported this broker fenced. */
    public boolean fenced() {
        return fenced;
    }

    /** The last metadata offset applied by this broker. */
    public long metadataOffset() {
        return follower == null ? 0 : follower.offset();
    }

    /**
     * Stops heartbeating, asks the controller to fence this broker (one want-fence heartbeat, at most
     * {@code fenceTimeout}) and stops following metadata. Idempotent.
     */
    public void close(Duration fenceTimeout) {
        if (closed) {
            return;
        }
        closed = true;
        Thread hb = heartbeats;
        if (hb != null) {
            hb.interrupt();
            try {
                hb.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (brokerEpoch >= 0) {
            Thread t = Thread.ofPlatform().name("broker-want-fence").daemon().start(() -> {
                try {
                    BrokerHeartbeatResponse r = heartbeat(true);
                    LOG.info("BROKER_WANT_FENCE brokerId={} answer={}", brokerId, r.getError());
                } catch (RuntimeException e) {
                    LOG.warn("Want-fence heartbeat of broker {} failed: {}", brokerId, e.toString());
                }
            });
            try {
                t.join(fenceTimeout.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (follower != null) {
            follower.close();
        }
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(3));
    }
}
