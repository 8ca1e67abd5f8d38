package io.stellflow.controller.server;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker lifecycle RPCs: RegisterBroker (a new incarnation starts fenced; its previous
 * incarnation's partitions lose it as leader and ISR member in the same entry) and BrokerHeartbeat
 * (session liveness in {@link BrokerLiveness}; a heartbeat asking to fence, or caught up while
 * fenced, commits the fence or unfence with its elections, {@link Fencing}).
 *
 * <p>Reached only while active ({@link NotControllerGuard}). Thread-safety: stateless apart from
 * its collaborators; handlers run on gRPC executor threads concurrently.
 */
final class BrokerRpcs {
    /** The control plane's category, as before its RPC families became classes. */
    private static final Logger LOG = LoggerFactory.getLogger(ControlPlane.class);
    /**
     * Attempts of a registration whose partition changes raced another committed change, at least;
     * more are made while the command is within its retry budget ({@link
     * Commands#withinRetryBudget}), up to {@link #REGISTER_ATTEMPTS_MAX}: ISR changes of a busy
     * partition can race five in a row on a loaded controller (RegistrationRaceTest, CI under load).
     */
    static final int REGISTER_ATTEMPTS = 5;
    /** Upper bound of attempts whatever the budget (each one is a full commit round trip). */
    static final int REGISTER_ATTEMPTS_MAX = 200;

    private final Quorum quorum;
    private final BrokerLiveness liveness;
    private final NotControllerGuard guard;
    private final Commands commands;
    private final boolean uncleanDefault;
    private final StorageReports storage;

    BrokerRpcs(
            Quorum quorum,
            BrokerLiveness liveness,
            NotControllerGuard guard,
            Commands commands,
            boolean uncleanDefault) {
        this(quorum, liveness, guard, commands, uncleanDefault, new StorageReports());
    }

    /**
     * @param uncleanDefault {@code unclean.leader.election.enable} for topics without an override
     * @param storage where each heartbeat's failed replicas and log dir state are kept
     */
    BrokerRpcs(
            Quorum quorum,
            BrokerLiveness liveness,
            NotControllerGuard guard,
            Commands commands,
            boolean uncleanDefault,
            StorageReports storage) {
        this.storage = storage;
        this.quorum = quorum;
        this.liveness = liveness;
        this.guard = guard;
        this.commands = commands;
        this.uncleanDefault = uncleanDefault;
    }

    /** RegisterBroker: the broker's epoch and the cluster id, or why not. */
    RegisterBrokerResponse register(RegisterBrokerRequest req) {
        long startNs = commands.startNs();
        if (req.getBrokerId() < 0 || !req.hasIncarnationId()) {
            commands.answered(CommandResult.ERROR, startNs);
            return RegisterBrokerResponse.newBuilder()
                    .setError(ErrorCode.INVALID_REQUEST)
                    .setErrorMessage("broker_id must be >= 0 and incarnation_id set")
                    .build();
        }
        return register(req, startNs, 0);
    }

    /**
     * One attempt at registering: reads the image, builds the registration and the partition changes
     * of the broker's previous incarnation from it, and commits them as one entry. When another
     * change of those partitions committed in between ({@code INVALID_UPDATE_VERSION}, or {@code
     * INELIGIBLE_REPLICA} for a leader it chose), the entry is refused as a whole and the attempt is
     * made again from the newer image: {@link #REGISTER_ATTEMPTS} times, then while within the retry
     * budget (a broker whose registration is refused does not start).
     */
    private RegisterBrokerResponse register(RegisterBrokerRequest req, long startNs, int attempt) {
        RegisterBrokerResponse.Builder r = RegisterBrokerResponse.newBuilder();
        MetadataImage img = quorum.image();
        String clusterId = img.clusterId();
        if (clusterId == null) {
            // This controller's first entry (with the cluster id) has not applied yet: the caller
            // retries (ControllerClient backs off and asks again), so the id has a single writer.
            return r.setError(ErrorCode.NOT_CONTROLLER)
                    .setErrorMessage("the active controller has not written the cluster id yet; retry")
                    .setLeader(guard.leader())
                    .build();
        }
        if (!req.getClusterId().isEmpty() && !req.getClusterId().equals(clusterId)) {
            commands.answered(CommandResult.ERROR, startNs);
            return r.setError(ErrorCode.INCONSISTENT_CLUSTER_ID)
                    .setErrorMessage("broker " + req.getBrokerId() + " belongs to cluster '"
                            + req.getClusterId()
                            + "' (its meta.properties or cluster.id), but this is cluster '"
                            + clusterId + "'")
                    .build();
        }
        BrokerRegistration existing = img.broker(req.getBrokerId());
        if (existing != null && existing.incarnationId().equals(MetadataRecords.uuid(req.getIncarnationId()))) {
            liveness.touch(req.getBrokerId());
            commands.answered(CommandResult.SUCCESS, startNs);
            return r.setBrokerEpoch(existing.brokerEpoch())
                    .setClusterId(clusterId)
                    .build();
        }
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                .setBrokerId(req.getBrokerId())
                .setIncarnationId(req.getIncarnationId())
                .addAllListeners(req.getListenersList())
                .setRack(req.getRack())
                .setFenced(true)
                .build()));
        // A new incarnation starts fenced: its old partitions lose it as leader and ISR member.
        List<Elections.Change> changes =
                existing == null ? List.of() : Fencing.leaveBroker(img, req.getBrokerId(), uncleanDefault, storage);
        records.addAll(Elections.records(changes));
        RaftQuorum.Submitted s = commands.commit(records);
        boolean raced = !changes.isEmpty()
                && (s.error() == ErrorCode.INVALID_UPDATE_VERSION || s.error() == ErrorCode.INELIGIBLE_REPLICA);
        if (raced
                && attempt + 1 < REGISTER_ATTEMPTS_MAX
                && (attempt + 1 < REGISTER_ATTEMPTS || commands.withinRetryBudget(startNs))) {
            if (attempt % 20 == 0) { // the first race, then one line per 20 attempts
                LOG.info(
                        "Registration of broker {} raced a partition change ({}, attempt {}); building it again",
                        req.getBrokerId(),
                        s.message(),
                        attempt + 1);
            }
            return register(req, startNs, attempt + 1);
        }
        if (s.error() == ErrorCode.NONE) {
            commands.elected(changes);
            storage.forget(req.getBrokerId()); // a new process: its heartbeats report afresh
            liveness.touch(req.getBrokerId());
            r.setBrokerEpoch(s.index()).setClusterId(clusterId);
            LOG.info(
                    "BROKER_REGISTERED broker={} epoch={} incarnation={} rack={} previous_epoch={}",
                    req.getBrokerId(),
                    s.index(),
                    MetadataRecords.uuid(req.getIncarnationId()),
                    req.getRack().isEmpty() ? "none" : req.getRack(),
                    existing == null ? -1 : existing.brokerEpoch());
        } else {
            r.setError(s.error()).setErrorMessage(s.message());
            if (s.error() == ErrorCode.NOT_CONTROLLER) {
                r.setLeader(guard.leader());
            }
        }
        commands.answered(Commands.result(s.error()), startNs);
        return r.build();
    }

    /**
     * BrokerHeartbeat: whether the broker is fenced now and the committed metadata offset. A plain
     * heartbeat is liveness (memory only); one that fences or unfences is a command.
     */
    BrokerHeartbeatResponse heartbeat(BrokerHeartbeatRequest req) {
        BrokerHeartbeatResponse.Builder r = BrokerHeartbeatResponse.newBuilder();
        long startNs = commands.startNs();
        MetadataImage img = quorum.image();
        BrokerRegistration b = img.broker(req.getBrokerId());
        if (b == null) {
            return r.setError(ErrorCode.BROKER_ID_NOT_REGISTERED)
                    .setErrorMessage("broker " + req.getBrokerId() + " is not registered")
                    .build();
        }
        if (b.brokerEpoch() != req.getBrokerEpoch()) {
            return r.setError(ErrorCode.STALE_BROKER_EPOCH)
                    .setErrorMessage("broker epoch " + req.getBrokerEpoch() + " is not the current " + b.brokerEpoch())
                    .build();
        }
        liveness.touch(b.id());
        StorageReports.Report before = storage.update(req);
        boolean fenced = b.fenced();
        RaftQuorum.Submitted s = null;
        if (req.getWantFence() && !fenced) {
            Fencing.Plan plan = Fencing.fence(img, b, uncleanDefault, storage);
            s = commands.commit(plan.records());
            fenced =
                    s.error() == ErrorCode.NONE || quorum.image().broker(b.id()).fenced();
            if (s.error() == ErrorCode.NONE) {
                commands.elected(plan.changes());
                // The broker asks: at a clean stop, or while its thread watchdog finds a thread stuck.
                LOG.info("BROKER_FENCED broker={} epoch={} reason=requested", b.id(), b.brokerEpoch());
            }
        } else if (!req.getWantFence() && fenced && req.getMetadataOffset() >= b.brokerEpoch()) {
            Fencing.Plan plan = Fencing.unfence(img, b, uncleanDefault, storage);
            s = commands.commit(plan.records());
            BrokerRegistration now = quorum.image().broker(b.id());
            fenced = s.error() != ErrorCode.NONE && (now == null || now.fenced());
            if (s.error() == ErrorCode.NONE) {
                commands.elected(plan.changes());
            }
        }
        if (s != null) {
            commands.answered(Commands.result(s.error()), startNs);
        }
        if (!req.getWantFence()) {
            storageChanges(b.id(), before, storage.report(b.id()));
        }
        return r.setFenced(fenced).setCommittedOffset(quorum.image().offset()).build();
    }

    /**
     * Commits the ISR and leader changes a heartbeat's failed replicas call for ({@link
     * StorageReports#plan}) as one entry, and logs each committed change as {@code
     * PARTITION_STORAGE_CHANGE}. Not committed (a race, no quorum): the next heartbeat plans again.
     */
    private void storageChanges(int brokerId, StorageReports.Report before, StorageReports.Report now) {
        List<Elections.Change> changes = storage.plan(quorum.image(), brokerId, before, now, uncleanDefault);
        if (changes.isEmpty()) {
            return;
        }
        RaftQuorum.Submitted s = commands.commit(Elections.records(changes));
        if (s.error() != ErrorCode.NONE) {
            LOG.warn(
                    "Partition changes for the failed replicas of broker {} not committed ({} {}); the next heartbeat"
                            + " retries",
                    brokerId,
                    s.error(),
                    s.message());
            return;
        }
        commands.elected(changes);
        for (Elections.Change c : changes) {
            LOG.info(
                    "PARTITION_STORAGE_CHANGE partition={} broker={} replicaFailed={} leader={}->{} isr={}->{}"
                            + " reason=storage",
                    c.name(),
                    brokerId,
                    now.failed()
                            .contains(new StorageReports.TopicPartitionId(
                                    c.topic().id(), c.before().partition())),
                    c.before().leader(),
                    c.leader(),
                    c.before().isr(),
                    c.isr());
        }
    }
}
