package io.stellflow.broker.replication;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.cluster.ReplicaStateListener;
import io.stellflow.broker.config.ReplicaFetcherConfig;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follower side of replication in a broker of a cluster: told by the {@code ReplicaManager}
 * about every role change ({@link ReplicaStateListener}), it keeps ONE {@link ReplicaFetcher} per
 * leader broker carrying all partitions this broker follows from that leader. A partition that
 * becomes a follower (or gets a new leader or leader epoch) moves to its leader's fetcher, which
 * reconciles the log by epoch before fetching; one that becomes leader or stops being hosted here
 * leaves its fetcher before the call returns (no follower append after that). A fetcher left
 * without partitions is closed.
 *
 * <p>Leader addresses come from the latest applied metadata image at each connection attempt (the
 * first listener of the leader's registration), so a leader that registered in the same metadata
 * batch is found on the next retry.
 *
 * <p>Threads: one event loop of the broker's transport ({@code sf-replica-io}) for all fetcher
 * connections, one thread per fetcher.
 *
 * <p>Thread-safety: the listener methods run on the metadata thread; all public methods are
 * synchronized (they wait for a fetcher thread at most while it applies one response).
 */
public final class ReplicaFetcherManager implements ReplicaStateListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcherManager.class);

    private final int brokerId;
    private final ReplicaFetcherConfig config;
    private final Transport transport;
    private final IntFunction<InetSocketAddress> addresses;
    private final ReplicationMetrics metrics;
    private final EventLoopGroup group;
    private final Map<Integer, ReplicaFetcher> fetchers = new HashMap<>();
    private final Map<Integer, Set<Partition>> followed = new HashMap<>();
    private final Map<Partition, Integer> leaderOf = new HashMap<>();
    private boolean closed;
    /** Watches each new fetcher's thread; null until {@link #watch}. */
    private ThreadWatchdog watchdog;
    /** This broker's epoch, sent in each Fetch v2; -1 until {@link #brokerEpoch} is set. */
    private LongSupplier brokerEpoch = () -> -1L;

    /**
     * @param brokerId this broker's id (the replicaId of its Fetches)
     * @param config the {@code replica.fetch.*} and {@code replica.socket.timeout.ms} settings every
     *     fetcher uses
     * @param transport the broker's transport (its socket channel class and event loop kind)
     * @param addresses a leader's data-plane address, or null while the metadata does not know it
     * @param metrics told about each fetch round trip
     */
    public ReplicaFetcherManager(
            int brokerId,
            ReplicaFetcherConfig config,
            Transport transport,
            IntFunction<InetSocketAddress> addresses,
            ReplicationMetrics metrics) {
        this.brokerId = brokerId;
        this.config = config;
        this.transport = transport;
        this.addresses = addresses;
        this.metrics = metrics;
        this.group = transport.newEventLoopGroup(1, new DefaultThreadFactory("sf-replica-io", true));
    }

    /**
     * A client for other broker-to-broker requests (the transaction APIs) on the fetchers' event
     * loop and addresses, with {@code replica.socket.timeout.ms} as its request timeout. The caller
     * closes it.
     */
    public BrokerRequests newBrokerRequests() {
        return new BrokerRequests(brokerId, group, transport.socketChannelClass(), addresses, (int)
                Math.min(Integer.MAX_VALUE, config.socketTimeoutMs()));
    }

    /**
     * Leader addresses from the latest image: the first listener of the broker's registration, or
     * null when the broker is not registered (yet) or has no listener.
     */
    public static IntFunction<InetSocketAddress> addressesFrom(Supplier<MetadataImage> image) {
        return id -> {
            BrokerRegistration b = image.get().broker(id);
            if (b == null || b.listeners().isEmpty()) {
                return null;
            }
            BrokerEndpoint e = b.listeners().get(0);
            return InetSocketAddress.createUnresolved(e.host(), e.port());
        };
    }

    @Override
    public synchronized void onBecomeFollower(Partition partition, PartitionImage state) {
        // Always a fresh start, even for a new epoch of the same leader: that case mostly means this
        // broker missed the metadata in between (paused, cut off), when the old connection may be
        // half-open and would otherwise hold the partition until replica.socket.timeout.ms.
        stopFollowing(partition);
        int leader = state.leader();
        if (closed || leader == PartitionImage.NO_LEADER || leader == brokerId) {
            return;
        }
        ReplicaFetcher fetcher = fetchers.computeIfAbsent(leader, this::newFetcher);
        followed.computeIfAbsent(leader, id -> new HashSet<>()).add(partition);
        leaderOf.put(partition, leader);
        fetcher.add(partition, state.leaderEpoch());
        LOG.info(
                "REPLICA_FETCH_STARTED partition={} leader={} leaderEpoch={} logEndOffset={}",
                partition,
                leader,
                state.leaderEpoch(),
                partition.logEndOffset());
    }

    /**
     * Where fetchers created from now on read this broker's epoch (its registration with the
     * controller, -1 before it registered), which each Fetch v2 carries to the leader.
     */
    public synchronized void brokerEpoch(LongSupplier epoch) {
        this.brokerEpoch = epoch;
    }

    private ReplicaFetcher newFetcher(int leader) {
        ReplicaFetcher f = new ReplicaFetcher(
                leader,
                brokerId,
                brokerEpoch,
                config,
                addresses,
                group,
                transport.socketChannelClass(),
                metrics,
                System::nanoTime);
        if (watchdog != null) {
            f.watch(watchdog);
        }
        return f;
    }

    /** Registers every fetcher thread, running and future, with {@code watchdog}. */
    public synchronized void watch(ThreadWatchdog watchdog) {
        this.watchdog = watchdog;
        for (ReplicaFetcher f : fetchers.values()) {
            f.watch(watchdog);
        }
    }

    @Override
    public synchronized void onBecomeLeader(Partition partition, PartitionImage state) {
        stopFollowing(partition);
    }

    @Override
    public synchronized void onStopReplica(Partition partition) {
        stopFollowing(partition);
    }

    /**
     * Removes {@code partition} from its fetcher, waiting until that fetcher's thread will not touch
     * the log again (a response being applied finishes first; at most 30 s), and closes an emptied
     * fetcher (which waits for its thread to end, at most another 30 s). The partition's own role
     * check ({@link Partition#runIfFollowing}) already keeps a late response out of a log that leads;
     * the wait also keeps it out of a log about to be deleted.
     */
    private void stopFollowing(Partition partition) {
        Integer leader = leaderOf.remove(partition);
        if (leader == null) {
            return;
        }
        ReplicaFetcher fetcher = fetchers.get(leader);
        fetcher.remove(partition);
        Set<Partition> set = followed.get(leader);
        set.remove(partition);
        if (set.isEmpty()) {
            followed.remove(leader);
            fetchers.remove(leader);
            fetcher.close();
        }
    }

    /** Leader ids with a running fetcher (tests and diagnostics). */
    public synchronized Set<Integer> leaders() {
        return Set.copyOf(fetchers.keySet());
    }

    /** Number of partitions followed (tests and diagnostics). */
    public synchronized int followedPartitions() {
        return leaderOf.size();
    }

    /** Stops every fetcher and the connection event loop. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ReplicaFetcher f : fetchers.values()) {
            f.close();
        }
        fetchers.clear();
        followed.clear();
        leaderOf.clear();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
