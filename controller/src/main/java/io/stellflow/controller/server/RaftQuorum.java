package io.stellflow.controller.server;

import com.google.protobuf.InvalidProtocolBufferException;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.QuorumVoter;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.CommandOutcome;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataCommand;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.RecordType;
import io.stellflow.controller.proto.VoterState;
import java.io.IOException;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.ExitUtils;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * This controller's Ratis server: one voter of the fixed metadata group, its state machine, and the
 * submission of commands (in-process, no Raft client round trip).
 *
 * <p>Thread-safety: {@link #submit} and the read methods may be called from any thread.
 */
public final class RaftQuorum implements Quorum, AutoCloseable {
    /** The one Raft group of the metadata quorum; fixed so every voter derives the same id. */
    public static final RaftGroupId GROUP_ID =
            RaftGroupId.valueOf(UUID.nameUUIDFromBytes("stellflow-metadata-quorum".getBytes(StandardCharsets.UTF_8)));

    /** Outcome of {@link #submit}: the state machine's answer, or why there is none. */
    public record Submitted(ErrorCode error, String message, long index) {}

    static {
        // Ratis answers a gRPC server that cannot start (its port taken) with System.exit(1), which
        // ends the whole process: a combined node, an embedding application, a test JVM. Disabled here,
        // the same failure is an ExitException that start() turns into a BindException. ExitUtils
        // also sets a default uncaught-exception handler when first used, one that "terminates" on any
        // uncaught exception (exits, or with exit disabled logs "Terminating with exit status -1"):
        // turned off, and the handler in place before (the JVM's own when none) is put back.
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        ExitUtils.disableSystemExit();
        ExitUtils.setTerminateOnUncaughtException(false);
        Thread.setDefaultUncaughtExceptionHandler(before);
    }

    private final ControllerConfig config;
    private final ControllerMetrics metrics;
    private final MetadataStateMachine stateMachine;
    private final RaftServer server;
    private final RaftPeerId selfId;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callId = new AtomicLong();

    public RaftQuorum(ControllerConfig config, ControllerMetrics metrics) throws IOException {
        this.config = config;
        this.metrics = metrics;
        this.stateMachine = new MetadataStateMachine(config.deltaRetainedEntries(), metrics);
        this.selfId = peerId(config.nodeId());
        Files.createDirectories(config.metadataLogDir());
        RaftProperties props = new RaftProperties();
        RaftConfigKeys.Rpc.setType(props, SupportedRpcType.GRPC);
        RaftServerConfigKeys.setStorageDir(
                props, List.of(config.metadataLogDir().toFile()));
        QuorumVoter self = config.self();
        GrpcConfigKeys.Server.setHost(props, self.host());
        GrpcConfigKeys.Server.setPort(props, self.raftPort());
        // Election timeout randomised in [t, 2t): with t = 1000 ms a dead leader is replaced within
        // ~2 s plus one pre-vote and vote round (milliseconds on a LAN); the 150-300 ms Ratis default
        // caused needless elections on a loaded 2-core machine.
        long t = config.electionTimeoutMs();
        RaftServerConfigKeys.Rpc.setTimeoutMin(props, TimeDuration.valueOf(t, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(props, TimeDuration.valueOf(2 * t, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setRequestTimeout(
                props, TimeDuration.valueOf(Math.max(3000, 3 * t), TimeUnit.MILLISECONDS));
        // A leader cut off from the majority steps down after this long, so clients are redirected
        // instead of waiting on an entry that cannot commit.
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(
                props, TimeDuration.valueOf(Math.max(2000, 4 * t), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(props, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(props, config.snapshotIntervalEntries());
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(props, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(props, true);
        // Metadata entries are small (a topic with 1000 partitions is ~30 KB): 8 MiB segments.
        RaftServerConfigKeys.Log.setSegmentSizeMax(props, SizeInBytes.valueOf("8MB"));
        RaftServerConfigKeys.Log.setPreallocatedSize(props, SizeInBytes.valueOf("1MB"));
        List<RaftPeer> peers = new ArrayList<>();
        for (QuorumVoter v : config.voters()) {
            peers.add(RaftPeer.newBuilder()
                    .setId(peerId(v.id()))
                    .setAddress(v.raftAddress())
                    .build());
        }
        this.server = RaftServer.newBuilder()
                .setServerId(selfId)
                .setGroup(RaftGroup.valueOf(GROUP_ID, peers))
                .setProperties(props)
                .setStateMachine(stateMachine)
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
    }

    /** The Ratis peer id of controller {@code nodeId} ({@code c<nodeId>}). */
    public static RaftPeerId peerId(int nodeId) {
        return RaftPeerId.valueOf("c" + nodeId);
    }

    /** The controller node id of a Ratis peer id made by {@link #peerId}. */
    public static int nodeId(RaftPeerId id) {
        return Integer.parseInt(id.toString().substring(1));
    }

    /**
     * Starts the Ratis server: binds the Raft port, recovers the metadata log and joins the quorum.
     *
     * @throws BindException when the Raft gRPC server cannot start, its port taken (the message names
     *     the address)
     * @throws IOException when the metadata log cannot be recovered; the process goes on either way
     */
    public void start(MetadataStateMachine.RoleListener listener) throws IOException {
        stateMachine.setRoleListener(listener);
        try {
            server.start();
        } catch (ExitUtils.ExitException e) {
            // Ratis reports only "Failed to start Grpc server"; its one cause is the bind.
            BindException bind = new BindException("Raft server of controller " + config.nodeId() + " cannot start on "
                    + config.self().raftAddress() + ": " + rootMessage(e));
            bind.initCause(e);
            throw bind;
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.toString();
    }

    public MetadataStateMachine stateMachine() {
        return stateMachine;
    }

    @Override
    public MetadataImage image() {
        return stateMachine.image();
    }

    private DivisionInfo info() throws IOException {
        return server.getDivision(GROUP_ID).getInfo();
    }

    /** Whether this node is the Raft leader and has committed an entry of its term. */
    @Override
    public boolean isActive() {
        try {
            DivisionInfo i = info();
            return i.isLeader() && i.isLeaderReady();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The leader's node id as this node knows it, or -1. */
    @Override
    public int leaderId() {
        try {
            RaftPeerId id = info().getLeaderId();
            return id == null ? -1 : nodeId(id);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    public long currentTerm() {
        try {
            return info().getCurrentTerm();
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Commits one command (records applied atomically) and waits up to {@code timeoutMs} for the
     * state machine's outcome. NOT_CONTROLLER when this node is not (or no longer) the ready leader,
     * REQUEST_TIMED_OUT when the entry did not commit in time. Reports the entry's append latency and,
     * once the state machine accepted it, its partition changes ({@link ControllerMetrics}).
     */
    @Override
    public Submitted submit(List<MetadataRecord> records, long timeoutMs) {
        byte[] bytes = MetadataCommand.newBuilder()
                .setVersion(1)
                .addAllRecords(records)
                .build()
                .toByteArray();
        RaftClientRequest req = RaftClientRequest.newBuilder()
                .setClientId(clientId)
                .setServerId(selfId)
                .setGroupId(GROUP_ID)
                .setCallId(callId.incrementAndGet())
                .setMessage(Message.valueOf(ByteString.copyFrom(bytes)))
                .setType(RaftClientRequest.writeRequestType())
                .build();
        long startNs = System.nanoTime();
        CompletableFuture<RaftClientReply> f;
        try {
            f = server.submitClientRequestAsync(req);
        } catch (IOException e) {
            return new Submitted(ErrorCode.NOT_CONTROLLER, e.toString(), -1);
        }
        RaftClientReply reply;
        try {
            reply = f.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return new Submitted(
                    ErrorCode.REQUEST_TIMED_OUT, "not committed within " + timeoutMs + " ms (it may still commit)", -1);
        } catch (ExecutionException e) {
            return new Submitted(ErrorCode.NOT_CONTROLLER, String.valueOf(e.getCause()), -1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Submitted(ErrorCode.REQUEST_TIMED_OUT, "interrupted", -1);
        }
        if (!reply.isSuccess()) {
            return new Submitted(ErrorCode.NOT_CONTROLLER, String.valueOf(reply.getException()), -1);
        }
        metrics.logAppend(System.nanoTime() - startNs);
        try {
            CommandOutcome o =
                    CommandOutcome.parseFrom(reply.getMessage().getContent().toByteArray());
            ErrorCode code = ErrorCode.forNumber(o.getErrorCode());
            if (code == ErrorCode.NONE) {
                countPartitionChanges(records);
            }
            return new Submitted(
                    code == null ? ErrorCode.UNKNOWN_SERVER_ERROR : code, o.getErrorMessage(), o.getIndex());
        } catch (InvalidProtocolBufferException e) {
            return new Submitted(ErrorCode.UNKNOWN_SERVER_ERROR, "unreadable outcome: " + e.getMessage(), -1);
        }
    }

    /** Every committed change of an existing partition's leader or ISR, whichever command carried it. */
    private void countPartitionChanges(List<MetadataRecord> records) {
        int changes = 0;
        for (int i = 0; i < records.size(); i++) {
            if (records.get(i).getType() == RecordType.PARTITION_CHANGE) {
                changes++;
            }
        }
        if (changes > 0) {
            metrics.partitionChanges(changes);
        }
    }

    /** Quorum state as the leader sees it (followers' fields are -1 when unknown). */
    public record QuorumState(int leaderId, long term, long committedIndex, long lastIndex, List<VoterState> voters) {}

    @Override
    public QuorumState describe() throws IOException {
        var division = server.getDivision(GROUP_ID);
        DivisionInfo info = division.getInfo();
        long commit = division.getRaftLog().getLastCommittedIndex();
        var lastEntry = division.getRaftLog().getLastEntryTermIndex();
        long last = lastEntry == null ? 0 : lastEntry.getIndex();
        Map<Integer, long[]> followers = new HashMap<>(); // id -> {matchIndex, lastContactMs}
        // The leader heartbeats every half election timeout (t / 2), so a live voter answers well
        // within t. Ratis starts a follower's clock at the leader's election minus its maximum
        // election timeout (2t), so 2t alone would flag every follower for the first moments of a
        // term; one more heartbeat interval (t / 2) gives a live voter time to answer first.
        long t = config.electionTimeoutMs();
        long unreachableAfterMs = 2 * t + t / 2;
        RoleInfoProto role = info.getRoleInfoProto();
        if (role.hasLeaderInfo()) {
            List<ServerRpcProto> list = role.getLeaderInfo().getFollowerInfoList();
            long[] match = info.getFollowerMatchIndices();
            for (int i = 0; i < list.size(); i++) {
                ServerRpcProto f = list.get(i);
                int id = nodeId(RaftPeerId.valueOf(f.getId().getId()));
                long m = match != null && i < match.length ? match[i] : -1;
                followers.put(id, new long[] {m, f.getLastRpcElapsedTimeMs()});
            }
        }
        List<VoterState> voters = new ArrayList<>();
        for (QuorumVoter v : config.voters()) {
            VoterState.Builder b = VoterState.newBuilder().setId(v.id()).setRaftEndpoint(v.raftAddress());
            if (v.id() == config.nodeId()) {
                b.setMatchIndex(last).setLag(0).setLastContactMsAgo(0);
            } else {
                long[] f = followers.get(v.id());
                if (f == null) {
                    b.setMatchIndex(-1).setLag(-1).setLastContactMsAgo(-1);
                } else {
                    b.setMatchIndex(f[0])
                            .setLag(f[0] < 0 ? -1 : Math.max(0, last - f[0]))
                            .setLastContactMsAgo(f[1])
                            .setUnreachable(f[1] >= unreachableAfterMs);
                }
            }
            voters.add(b.build());
        }
        return new QuorumState(leaderId(), info.getCurrentTerm(), commit, last, voters);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
