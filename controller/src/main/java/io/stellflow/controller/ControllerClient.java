package io.stellflow.controller;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.ControllerLeader;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DeleteTopicsRequest;
import io.stellflow.controller.proto.DeleteTopicsResponse;
import io.stellflow.controller.proto.DescribeClusterRequest;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.DescribeConfigsRequest;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.DescribeQuorumRequest;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Client of the controller quorum's control plane, for brokers and tools.
 *
 * <p>Every call finds the active controller: it tries the last known leader, else the bootstrap
 * endpoints in turn; a {@code NOT_CONTROLLER} answer naming the leader redirects at once, an
 * unreachable controller or an answer without a known leader moves on after a short backoff (50 ms,
 * doubling to 250 ms, so a newly elected controller is found within about a quarter second; a
 * longer backoff would only add to the failover time, and a few small requests a second cost the
 * controllers nothing). This repeats until an active controller answers or the request timeout
 * passes. The active controller's answer is returned as is: its {@code error} field carries validation
 * errors (for example {@code INVALID_TOPIC_EXCEPTION}) and {@code REQUEST_TIMED_OUT} when the entry
 * did not commit within the controller's {@code controller.request.timeout.ms} (it may still commit).
 *
 * <p>Thread-safety: all methods may be called from any thread concurrently; each call blocks the
 * calling thread until it has an answer or throws.
 *
 * <p>Errors: {@link ControllerUnavailableException} when no active controller answered before the
 * request timeout; {@link StatusRuntimeException} for a gRPC failure that retrying cannot fix (for
 * example UNIMPLEMENTED from a wrong endpoint).
 */
public final class ControllerClient implements AutoCloseable {
    /** Default of {@link Builder#requestTimeout}. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** Default of {@link Builder#attemptTimeout}: the controller's default request timeout plus slack. */
    public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(7);

    private static final long MIN_BACKOFF_MS = 50;
    private static final long MAX_BACKOFF_MS = 250;

    private final List<String> bootstrap;
    private final long requestTimeoutNs;
    private final long attemptTimeoutNs;
    private final Map<String, ManagedChannel> channels = new HashMap<>();
    private volatile String leaderHint;
    private int nextBootstrap;
    private boolean closed;

    private ControllerClient(Builder b) {
        this.bootstrap = List.copyOf(b.bootstrap);
        this.requestTimeoutNs = b.requestTimeout.toNanos();
        this.attemptTimeoutNs = b.attemptTimeout.toNanos();
    }

    /** A builder; {@code bootstrapEndpoints} are control-plane {@code host:port}s, one or more. */
    public static Builder builder(List<String> bootstrapEndpoints) {
        return new Builder(bootstrapEndpoints);
    }

    /**
     * Parses {@code controller.quorum.bootstrap.servers} ({@code host:port,host:port}) into a builder.
     *
     * @throws IllegalArgumentException when empty or an entry is not host:port
     */
    public static Builder builder(String bootstrapServers) {
        List<String> list = new ArrayList<>();
        if (bootstrapServers != null) {
            for (String s : bootstrapServers.split(",")) {
                if (!s.isBlank()) {
                    list.add(s.trim());
                }
            }
        }
        return new Builder(list);
    }

    /** Builder of {@link ControllerClient}. Not thread-safe. */
    public static final class Builder {
        private final List<String> bootstrap;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private Duration attemptTimeout = DEFAULT_ATTEMPT_TIMEOUT;

        private Builder(List<String> bootstrap) {
            if (bootstrap.isEmpty()) {
                throw new IllegalArgumentException("controller.quorum.bootstrap.servers is empty");
            }
            for (String e : bootstrap) {
                int colon = e.lastIndexOf(':');
                if (colon <= 0 || colon == e.length() - 1) {
                    throw new IllegalArgumentException("controller endpoint '" + e + "' is not host:port");
                }
            }
            this.bootstrap = List.copyOf(bootstrap);
        }

        /** Total time one call may take, retries included (default 30 s). */
        public Builder requestTimeout(Duration d) {
            this.requestTimeout = d;
            return this;
        }

        /** gRPC deadline of one attempt against one controller (default 7 s). */
        public Builder attemptTimeout(Duration d) {
            this.attemptTimeout = d;
            return this;
        }

        public ControllerClient build() {
            return new ControllerClient(this);
        }
    }

    /** The bootstrap control-plane endpoints ({@code host:port}), in the order given. */
    public List<String> bootstrapEndpoints() {
        return bootstrap;
    }

    /** Registers (or re-registers, with a new incarnation id) a broker; returns its broker epoch. */
    public RegisterBrokerResponse registerBroker(RegisterBrokerRequest request) {
        return call(
                ControllerRpc.REGISTER_BROKER,
                request,
                RegisterBrokerResponse::getError,
                RegisterBrokerResponse::getLeader);
    }

    /** One heartbeat; send every {@code broker.heartbeat.interval.ms} (2 s by default). */
    public BrokerHeartbeatResponse brokerHeartbeat(BrokerHeartbeatRequest request) {
        return call(
                ControllerRpc.BROKER_HEARTBEAT,
                request,
                BrokerHeartbeatResponse::getError,
                BrokerHeartbeatResponse::getLeader);
    }

    /** Creates topics; each topic commits as one entry with its partitions, results per topic. */
    public CreateTopicsResponse createTopics(CreateTopicsRequest request) {
        return call(
                ControllerRpc.CREATE_TOPICS, request, CreateTopicsResponse::getError, CreateTopicsResponse::getLeader);
    }

    /** Deletes topics by name, results per topic. */
    public DeleteTopicsResponse deleteTopics(DeleteTopicsRequest request) {
        return call(
                ControllerRpc.DELETE_TOPICS, request, DeleteTopicsResponse::getError, DeleteTopicsResponse::getLeader);
    }

    /** Grows a topic to a new total partition count. */
    public CreatePartitionsResponse createPartitions(CreatePartitionsRequest request) {
        return call(
                ControllerRpc.CREATE_PARTITIONS,
                request,
                CreatePartitionsResponse::getError,
                CreatePartitionsResponse::getLeader);
    }

    /** A partition leader's ISR change, checked against the partition epoch. */
    public AlterPartitionResponse alterPartition(AlterPartitionRequest request) {
        return call(
                ControllerRpc.ALTER_PARTITION,
                request,
                AlterPartitionResponse::getError,
                AlterPartitionResponse::getLeader);
    }

    /** A block of producer ids for this broker (its id and current broker epoch in the request). */
    public AllocateProducerIdsResponse allocateProducerIds(AllocateProducerIdsRequest request) {
        return call(
                ControllerRpc.ALLOCATE_PRODUCER_IDS,
                request,
                AllocateProducerIdsResponse::getError,
                AllocateProducerIdsResponse::getLeader);
    }

    /** Voters, leader, term, committed index and lag per voter. */
    public DescribeQuorumResponse describeQuorum() {
        return call(
                ControllerRpc.DESCRIBE_QUORUM,
                DescribeQuorumRequest.getDefaultInstance(),
                DescribeQuorumResponse::getError,
                DescribeQuorumResponse::getLeader);
    }

    /** Registered brokers with fenced state and racks. */
    public DescribeClusterResponse describeCluster() {
        return call(
                ControllerRpc.DESCRIBE_CLUSTER,
                DescribeClusterRequest.getDefaultInstance(),
                DescribeClusterResponse::getError,
                DescribeClusterResponse::getLeader);
    }

    /** Sets/deletes config overrides of one topic (one entry, all or nothing). */
    public IncrementalAlterConfigsResponse incrementalAlterConfigs(IncrementalAlterConfigsRequest request) {
        return call(
                ControllerRpc.INCREMENTAL_ALTER_CONFIGS,
                request,
                IncrementalAlterConfigsResponse::getError,
                IncrementalAlterConfigsResponse::getLeader);
    }

    /** The config overrides of one topic. */
    public DescribeConfigsResponse describeConfigs(String topic) {
        return call(
                ControllerRpc.DESCRIBE_CONFIGS,
                DescribeConfigsRequest.newBuilder().setTopic(topic).build(),
                DescribeConfigsResponse::getError,
                DescribeConfigsResponse::getLeader);
    }

    /**
     * Preferred or unclean leader elections (one entry for all of them); results per partition. Every
     * election changes the leader epoch of its partition.
     */
    public ElectLeadersResponse electLeaders(ElectLeadersRequest request) {
        return call(
                ControllerRpc.ELECT_LEADERS, request, ElectLeadersResponse::getError, ElectLeadersResponse::getLeader);
    }

    /**
     * Starts following committed metadata after {@code fromOffset} (0: from the beginning, which
     * starts with a full image). The follower reconnects to the active controller by itself and
     * resumes after the last offset it delivered.
     */
    public MetadataFollower followMetadata(long fromOffset, MetadataListener listener) {
        return new MetadataFollower(this, fromOffset, listener);
    }

    private <Q, R> R call(
            MethodDescriptor<Q, R> method,
            Q request,
            Function<R, ErrorCode> errorOf,
            Function<R, ControllerLeader> leaderOf) {
        long deadlineNs = System.nanoTime() + requestTimeoutNs;
        long backoffMs = MIN_BACKOFF_MS;
        String last = "no attempt";
        RuntimeException lastCause = null;
        while (true) {
            long remainingNs = deadlineNs - System.nanoTime();
            if (remainingNs <= 0) {
                throw new ControllerUnavailableException(
                        method.getBareMethodName() + ": no active controller answered within "
                                + TimeUnit.NANOSECONDS.toMillis(requestTimeoutNs) + " ms; last attempt: " + last,
                        lastCause);
            }
            String target = pickTarget();
            ManagedChannel ch = channel(target);
            try {
                R r = ClientCalls.blockingUnaryCall(
                        ch,
                        method,
                        CallOptions.DEFAULT.withDeadlineAfter(
                                Math.min(remainingNs, attemptTimeoutNs), TimeUnit.NANOSECONDS),
                        request);
                if (errorOf.apply(r) != ErrorCode.NOT_CONTROLLER) {
                    leaderHint = target;
                    return r;
                }
                ControllerLeader l = leaderOf.apply(r);
                last = target + " is not the controller (leader " + l.getLeaderId() + ")";
                if (l.hasEndpoint() && !hostPort(l).equals(target)) {
                    leaderHint = hostPort(l);
                    continue; // redirect at once
                }
                leaderHint = null;
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if (code != Status.Code.UNAVAILABLE
                        && code != Status.Code.DEADLINE_EXCEEDED
                        && code != Status.Code.CANCELLED
                        && code != Status.Code.UNKNOWN
                        && code != Status.Code.RESOURCE_EXHAUSTED) {
                    throw e;
                }
                last = target + ": " + describe(e.getStatus());
                lastCause = e;
                leaderHint = null;
                ch.resetConnectBackoff();
            }
            sleepMs(Math.min(backoffMs, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime()))));
            backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        }
    }

    /**
     * A gRPC failure in an operator's words: {@code unreachable (Connection refused)}, {@code no answer
     * within the attempt deadline}, ...; never the status' internal details (resolver and load
     * balancer timings), which say nothing to a user.
     */
    static String describe(Status status) {
        Throwable cause = status.getCause();
        String why = cause != null && cause.getMessage() != null ? " (" + rootMessage(cause) + ")" : "";
        return switch (status.getCode()) {
            case UNAVAILABLE -> "unreachable" + why;
            case DEADLINE_EXCEEDED -> "no answer within the attempt deadline";
            case CANCELLED -> "call cancelled";
            case RESOURCE_EXHAUSTED -> "controller overloaded";
            default -> status.getCode().name() + why;
        };
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() != null ? root.getMessage() : root.toString();
    }

    static String hostPort(ControllerLeader l) {
        String host = l.getEndpoint().getHost();
        return (host.contains(":") ? "[" + host + "]" : host) + ":"
                + l.getEndpoint().getPort();
    }

    /** The leader hint, or the next bootstrap endpoint. */
    synchronized String pickTarget() {
        String hint = leaderHint;
        if (hint != null) {
            return hint;
        }
        String t = bootstrap.get(nextBootstrap % bootstrap.size());
        nextBootstrap = (nextBootstrap + 1) % bootstrap.size();
        return t;
    }

    void setLeaderHint(String endpoint) {
        leaderHint = endpoint;
    }

    /** A cached channel to {@code hostPort}. */
    synchronized ManagedChannel channel(String hostPort) {
        if (closed) {
            throw new IllegalStateException("ControllerClient is closed");
        }
        return channels.computeIfAbsent(
                hostPort,
                hp -> Grpc.newChannelBuilder(hp, InsecureChannelCredentials.create())
                        .build());
    }

    static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ControllerUnavailableException("interrupted while waiting to retry", e);
        }
    }

    /** Closes the channels; followers created by this client stop. Idempotent. */
    @Override
    public void close() {
        List<ManagedChannel> toClose;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(channels.values());
            channels.clear();
        }
        for (ManagedChannel ch : toClose) {
            ch.shutdownNow();
        }
        for (ManagedChannel ch : toClose) {
            try {
                ch.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    synchronized boolean isClosed() {
        return closed;
    }
}
