package io.stellflow.controller.server;

import com.google.protobuf.InvalidProtocolBufferException;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.image.ApplyResult;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.CommandOutcome;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataCommand;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.RecordType;
import java.io.File;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis state machine of the metadata quorum. Each log entry holds one {@link MetadataCommand};
 * {@link #applyTransaction} applies it with {@link MetadataApplier} (atomic, deterministic), records
 * the applied (term, index), keeps the delta for {@code FollowMetadata} and replies with a
 * {@link CommandOutcome}. Snapshots ({@link SnapshotFile}, named {@code snapshot.<term>_<index>}) are
 * taken by Ratis every {@code metadata.snapshot.interval.entries} entries and loaded at start or after
 * a snapshot install, so a restart replays only the log after the latest snapshot.
 *
 * <p>Thread-safety: Ratis calls apply/snapshot methods from its single state-machine updater thread;
 * readers ({@link #image}, {@link #awaitDeltasAfter}) use this object's monitor.
 */
public final class MetadataStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataStateMachine.class);

    /** Called on role changes; implemented by the controller. */
    public interface RoleListener {
        void leaderChanged(RaftPeerId newLeader);

        void leaderReady();
    }

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final int retainedEntries;
    private final ControllerMetrics metrics;
    private final ArrayDeque<MetadataDelta> retained = new ArrayDeque<>();
    private volatile RoleListener roleListener;
    private MetadataImage image = MetadataImage.EMPTY;
    /** Every delta with offset > retainedFrom is in {@link #retained}. */
    private long retainedFrom;
    /** Raft index of the snapshot this instance last loaded, -1 when none (written by Ratis's thread). */
    private volatile long loadedSnapshotIndex = -1;
    /** Log entries this instance applied since it was created (written by Ratis's updater thread only). */
    private final AtomicLong appliedEntries = new AtomicLong();

    public MetadataStateMachine(int retainedEntries, ControllerMetrics metrics) {
        this.retainedEntries = retainedEntries;
        this.metrics = metrics;
    }

    void setRoleListener(RoleListener l) {
        this.roleListener = l;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        loadLatestSnapshot();
    }

    @Override
    public void reinitialize() throws IOException {
        loadLatestSnapshot();
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    private void loadLatestSnapshot() throws IOException {
        SingleFileSnapshotInfo info = storage.loadLatestSnapshot();
        if (info == null) {
            return;
        }
        long startNs = System.nanoTime();
        File file = info.getFile().getPath().toFile();
        if (info.hasMd5()) {
            MD5FileUtil.verifySavedMD5(file, info.getFile().getFileDigest());
        }
        MetadataImage loaded = MetadataImage.fromSnapshot(SnapshotFile.read(file.toPath()));
        synchronized (this) {
            image = loaded;
            retained.clear();
            retainedFrom = loaded.offset();
            notifyAll();
        }
        setLastAppliedTermIndex(info.getTermIndex());
        loadedSnapshotIndex = info.getIndex();
        metrics.replay(System.nanoTime() - startNs);
        reportBrokers(loaded);
        LOG.info(
                "METADATA_SNAPSHOT_LOADED file={} term={} index={} topics={} brokers={}",
                file,
                info.getTerm(),
                info.getIndex(),
                loaded.topicsByName().size(),
                loaded.brokers().size());
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        long term = entry.getTerm();
        long index = entry.getIndex();
        ApplyResult r;
        List<MetadataRecord> records;
        try {
            MetadataCommand cmd = MetadataCommand.parseFrom(
                    entry.getStateMachineLogEntry().getLogData().toByteArray());
            records = cmd.getRecordsList();
            r = MetadataApplier.apply(image, term, index, records);
        } catch (InvalidProtocolBufferException e) {
            records = List.of();
            r = new ApplyResult(
                    MetadataApplier.apply(image, term, index, List.of()).image(),
                    ErrorCode.INVALID_REQUEST,
                    "entry is not a MetadataCommand: " + e.getMessage());
        }
        MetadataDelta delta = new MetadataDelta(term, index, r.ok() ? records : List.of());
        synchronized (this) {
            image = r.image();
            retained.addLast(delta);
            while (retained.size() > retainedEntries) {
                retainedFrom = retained.removeFirst().offset();
            }
            notifyAll();
        }
        updateLastAppliedTermIndex(term, index);
        appliedEntries.incrementAndGet();
        if (r.ok() && changesBrokers(records)) {
            reportBrokers(r.image());
        }
        CommandOutcome outcome = CommandOutcome.newBuilder()
                .setTerm(term)
                .setIndex(index)
                .setErrorCode(r.error().getNumber())
                .setErrorMessage(r.message())
                .build();
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(outcome.toByteArray())));
    }

    private static boolean changesBrokers(List<MetadataRecord> records) {
        for (int i = 0; i < records.size(); i++) {
            RecordType t = records.get(i).getType();
            if (t == RecordType.REGISTER_BROKER || t == RecordType.FENCE_BROKER || t == RecordType.UNFENCE_BROKER) {
                return true;
            }
        }
        return false;
    }

    /** The broker gauges from an image this node applied (every controller reports its own view). */
    private void reportBrokers(MetadataImage img) {
        int fenced = 0;
        for (BrokerRegistration b : img.brokers().values()) {
            if (b.fenced()) {
                fenced++;
            }
        }
        metrics.brokers(img.brokers().size(), fenced);
    }

    @Override
    public long takeSnapshot() throws IOException {
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() <= 0) {
            return RaftLog_INVALID;
        }
        MetadataImage img = image();
        File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
        SnapshotFile.write(file.toPath(), img.toSnapshot());
        MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
        LOG.info("METADATA_SNAPSHOT_TAKEN file={} term={} index={}", file, last.getTerm(), last.getIndex());
        return last.getIndex();
    }

    /**
     * Raft index of the metadata snapshot this state machine last loaded (at start or after a snapshot
     * install), or -1 when it loaded none. Thread-safe (volatile read).
     */
    public long loadedSnapshotIndex() {
        return loadedSnapshotIndex;
    }

    /**
     * Number of metadata log entries this state machine applied since it was created (entries covered
     * by a loaded snapshot are not counted; Ratis's own configuration entries never are). Thread-safe.
     */
    public long appliedEntries() {
        return appliedEntries.get();
    }

    /** Ratis's "no snapshot" index. */
    private static final long RaftLog_INVALID = -1;

    /** The latest applied image. */
    public synchronized MetadataImage image() {
        return image;
    }

    /**
     * The first {@code maxDeltas} deltas with offset greater than {@code offset}, in offset order,
     * waiting up to {@code maxWaitMs} for at least one.
     *
     * @return the deltas (possibly empty after the wait), or null when {@code offset} is older than
     *     what is retained (the caller sends the full image instead)
     */
    public synchronized List<MetadataDelta> awaitDeltasAfter(long offset, long maxWaitMs, int maxDeltas)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + maxWaitMs;
        while (image.offset() <= offset) {
            if (offset < retainedFrom) {
                return null;
            }
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                return List.of();
            }
            wait(left);
        }
        if (offset < retainedFrom) {
            return null;
        }
        List<MetadataDelta> out = new ArrayList<>();
        for (MetadataDelta d : retained) {
            if (d.offset() > offset) {
                out.add(d);
                if (out.size() == maxDeltas) {
                    break;
                }
            }
        }
        return out;
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        RoleListener l = roleListener;
        if (l != null) {
            l.leaderChanged(newLeaderId);
        }
    }

    @Override
    public void notifyLeaderReady() {
        RoleListener l = roleListener;
        if (l != null) {
            l.leaderReady();
        }
    }
}
