package io.stellflow.controller.server;

import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.FailedReplica;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;

/**
 * What each broker's last heartbeat said about its storage (issue #23, log dir failures): the
 * replicas it hosts but cannot serve ({@code failed_replicas}) and whether it can take a new replica
 * ({@code no_writable_log_dir}). Held in the active controller's memory only, like {@link
 * BrokerLiveness}: heartbeats are not Raft entries, and a broker repeats its full report in every
 * heartbeat, so a new active controller knows it again one heartbeat interval after {@link #reset}.
 *
 * <p>Used by elections (a replica its broker reports failed is never elected, {@link #eligible}) and
 * by replica placement (a broker without a writable log dir gets no new replica, {@link
 * #acceptsNewReplicas}).
 *
 * <p>Thread-safety: any thread; each broker's report is replaced as a whole (one immutable value).
 */
final class StorageReports {
    /** One partition of one topic, by topic id. */
    record TopicPartitionId(UUID topicId, int partition) {}

    /**
     * One broker's report.
     *
     * @param failed the replicas it cannot serve
     * @param readable those of {@code failed} that still serve reads (a full disk)
     * @param noWritableLogDir no log dir of the broker can take a new replica
     */
    record Report(Set<TopicPartitionId> failed, Set<TopicPartitionId> readable, boolean noWritableLogDir) {
        static final Report HEALTHY = new Report(Set.of(), Set.of(), false);
    }

    private final ConcurrentHashMap<Integer, Report> reports = new ConcurrentHashMap<>();

    /**
     * Records the report of one heartbeat.
     *
     * @return the broker's previous report ({@link Report#HEALTHY} when none)
     */
    Report update(BrokerHeartbeatRequest req) {
        Report next = Report.HEALTHY;
        if (req.getFailedReplicasCount() > 0 || req.getNoWritableLogDir()) {
            Set<TopicPartitionId> failed = new HashSet<>();
            Set<TopicPartitionId> readable = new HashSet<>();
            for (FailedReplica r : req.getFailedReplicasList()) {
                TopicPartitionId id = new TopicPartitionId(MetadataRecords.uuid(r.getTopicId()), r.getPartition());
                failed.add(id);
                if (r.getReadable()) {
                    readable.add(id);
                }
            }
            next = new Report(Set.copyOf(failed), Set.copyOf(readable), req.getNoWritableLogDir());
        }
        Report before = reports.put(req.getBrokerId(), next);
        return before == null ? Report.HEALTHY : before;
    }

    /** The last report of {@code brokerId} ({@link Report#HEALTHY} when none). */
    Report report(int brokerId) {
        return reports.getOrDefault(brokerId, Report.HEALTHY);
    }

    /** Forgets one broker's report (it registered again: a new process, a new report). */
    void forget(int brokerId) {
        reports.remove(brokerId);
    }

    /** Forgets every report (on becoming active). */
    void reset() {
        reports.clear();
    }

    /** Whether {@code brokerId} reported replica {@code topicId}-{@code partition} failed. */
    boolean failed(int brokerId, UUID topicId, int partition) {
        Report r = reports.get(brokerId);
        return r != null && !r.failed().isEmpty() && r.failed().contains(new TopicPartitionId(topicId, partition));
    }

    /** Whether {@code brokerId} may get a new replica: it did not report that no log dir can take one. */
    boolean acceptsNewReplicas(int brokerId) {
        Report r = reports.get(brokerId);
        return r == null || !r.noWritableLogDir();
    }

    /**
     * {@code live} narrowed to the replicas of {@code p} that their broker does not report failed:
     * the liveness every election of {@code p} uses.
     */
    IntPredicate eligible(IntPredicate live, TopicImage t, PartitionImage p) {
        if (reports.isEmpty()) {
            return live;
        }
        return id -> live.test(id) && !failed(id, t.id(), p.partition());
    }

    /**
     * The partition changes one heartbeat's report calls for, planned on {@code img} with the
     * {@link Elections} rules (as a fence does, but for the listed partitions only): each replica the
     * broker lists as failed leaves the ISR (unless it is the last member: the partition then has no
     * leader) and, if it led, leadership goes to the first other eligible ISR member ({@link
     * Elections#afterLeave}), except that a {@link Report#readable} replica that leads stays leader
     * while no other ISR member can take over (a full disk on the only up-to-date replica: its
     * acknowledged records stay readable, and it takes writes again once it recovered in place,
     * without an election); each replica listed in {@code before} but no longer, of a partition
     * still without a leader, may be elected again ({@link Elections#electLeaderless}). Replicas that
     * recovered while another replica leads rejoin the ISR through the leader's ISR expansion. Empty
     * when nothing changes, so a broker that keeps listing the same replicas plans nothing again.
     *
     * @param uncleanDefault {@code unclean.leader.election.enable} for topics without an override
     */
    List<Elections.Change> plan(MetadataImage img, int brokerId, Report before, Report now, boolean uncleanDefault) {
        if (before.failed().isEmpty() && now.failed().isEmpty()) {
            return List.of();
        }
        IntPredicate live = Elections.live(img);
        IntPredicate others = id -> id != brokerId && live.test(id);
        List<Elections.Change> out = new ArrayList<>();
        for (TopicPartitionId f : now.failed()) {
            TopicImage t = img.topic(f.topicId());
            PartitionImage p = t == null ? null : t.partition(f.partition());
            if (p != null && p.replicas().contains(brokerId)) {
                Elections.Change c = Elections.afterLeave(
                        t,
                        p,
                        brokerId,
                        eligible(others, t, p),
                        Elections.uncleanEnabled(t, uncleanDefault),
                        Elections.Reason.STORAGE);
                boolean wouldGoOffline = c != null && c.leader() == PartitionImage.NO_LEADER && c.leaderChanged();
                if (c != null && !(wouldGoOffline && now.readable().contains(f))) {
                    out.add(c);
                }
            }
        }
        for (TopicPartitionId f : before.failed()) {
            if (now.failed().contains(f)) {
                continue;
            }
            TopicImage t = img.topic(f.topicId());
            PartitionImage p = t == null ? null : t.partition(f.partition());
            if (p != null
                    && p.leader() == PartitionImage.NO_LEADER
                    && p.replicas().contains(brokerId)) {
                Elections.Change c = Elections.electLeaderless(
                        t,
                        p,
                        eligible(live, t, p),
                        Elections.uncleanEnabled(t, uncleanDefault),
                        Elections.Reason.STORAGE);
                if (c != null) {
                    out.add(c);
                }
            }
        }
        return out;
    }
}
