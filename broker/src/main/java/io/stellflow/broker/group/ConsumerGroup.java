package io.stellflow.broker.group;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.group.GroupRecords.ConsumerGroupValue;
import io.stellflow.broker.group.GroupRecords.MemberValue;
import io.stellflow.protocol.Errors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * A group of our protocol (ConsumerGroupHeartbeat, the KIP-848 model).
 *
 * <p><b>Epochs.</b> The group epoch grows on every change of membership, subscriptions, assignor or
 * (through a new target) topic metadata. The target assignment is computed by the group's {@link
 * PartitionAssignor} for a group epoch, which becomes the target (assignment) epoch. Each member has
 * a member epoch: it reaches the target epoch once it has revoked what it must give up.
 *
 * <p><b>Reconciliation</b> (at each heartbeat of the member): a member first gives up the partitions
 * it owns that its target does not hold (they become {@code pendingRevocation}, still owned by it,
 * and its epoch does not move); it acknowledges by a heartbeat whose {@code ownedPartitions} no
 * longer holds them, or is fenced (removed) when its rebalance timeout passes first. Then its epoch
 * becomes the target epoch and it gets the partitions of its target that no other member owns or
 * must still revoke; the rest follow at later heartbeats, as their owners release them. So a
 * partition is never owned by two members, and is revoked before it is reassigned.
 *
 * <p><b>Off the request path.</b> A heartbeat that changes the group only bumps the group epoch and
 * marks the target stale; the target is computed by {@link #computeTarget} from the shard's {@code
 * poll} (which runs at once, see {@link #nextDeadlineMs}), and the heartbeat answers with the
 * member's current, possibly older, assignment. Groups small enough ({@code members x partitions <=}
 * {@link #INLINE_ASSIGNMENT_MAX_WORK}) are assigned inline, so a small group's first heartbeat
 * already carries partitions.
 *
 * <p><b>Static members</b> ({@code instanceId}): a leave with epoch -2 keeps the member and its
 * partitions for the session timeout; a join with the same instance id takes them over (new member
 * id, same epoch and partitions). A second live member with the instance id gets
 * UNRELEASED_INSTANCE_ID.
 *
 * <p>Every change of stored state is appended to the caller's record list as it is made (apply on
 * write). Thread-safety: confined to the shard's thread.
 */
final class ConsumerGroup {
    /** Member epoch of a join. */
    static final int JOIN_EPOCH = 0;

    /** Member epoch of a leave. */
    static final int LEAVE_EPOCH = -1;

    /**
     * Largest {@code members x subscribed partitions} assigned inside the heartbeat: the uniform
     * assignor does about that many steps per pass, 20,000 is well under a millisecond; bigger groups
     * wait for {@code poll}.
     */
    static final long INLINE_ASSIGNMENT_MAX_WORK = 20_000;

    /**
     * Heartbeat interval, in milliseconds, handed to a member that is not at its target yet (it must
     * still revoke, or waits for partitions another member is revoking), or while the group's target
     * is being computed: the configured interval when that is shorter. A member in transition comes
     * back soon, so a released partition reaches its new owner within this time instead of a whole
     * interval; a stable member keeps {@code group.consumer.heartbeat.interval.ms}.
     */
    static final int RECONCILING_HEARTBEAT_INTERVAL_MS = 250;

    private final String groupId;
    private final Runnable rebalanced;
    private final GroupConfig config;
    private final TopicPartitionCounts counts;

    private int groupEpoch;
    private String assignor;
    private long emptySinceMs = -1;
    private final TargetAssignment target;
    private final TreeMap<String, ConsumerMember> members = new TreeMap<>();

    // Derived, rebuilt on load.
    private final Map<String, String> staticMembers = new HashMap<>();
    private final Map<TopicPartition, String> owners = new HashMap<>();

    /** A heartbeat as the group sees it (the codec's fields; {@code ownedPartitions} null = unchanged). */
    record Heartbeat(
            String memberId,
            int memberEpoch,
            String instanceId,
            String rackId,
            int rebalanceTimeoutMs,
            List<String> subscribedTopicNames,
            String serverAssignor,
            Assignment ownedPartitions) {}

    /** The answer to a heartbeat; {@code assignment} null = unchanged since the last answer. */
    record HeartbeatResult(
            short errorCode,
            String errorMessage,
            String memberId,
            int memberEpoch,
            int heartbeatIntervalMs,
            int sessionTimeoutMs,
            Assignment assignment) {}

    ConsumerGroup(String groupId, GroupConfig config, TopicPartitionCounts counts) {
        this(groupId, config, counts, () -> {});
    }

    /**
     * @param rebalanced run once per live group epoch bump (a member joined, left or changed its
     *     subscription, or the target moved with the metadata); never by the load ({@code
     *     stellflow.group.rebalance.count})
     */
    ConsumerGroup(String groupId, GroupConfig config, TopicPartitionCounts counts, Runnable rebalanced) {
        this.rebalanced = rebalanced;
        this.groupId = groupId;
        this.config = config;
        this.counts = counts;
        this.assignor = config.defaultAssignor();
        this.target = new TargetAssignment(groupId, counts);
    }

    String groupId() {
        return groupId;
    }

    int groupEpoch() {
        return groupEpoch;
    }

    int targetEpoch() {
        return target.epoch();
    }

    String assignor() {
        return assignor;
    }

    long emptySinceMs() {
        return emptySinceMs;
    }

    boolean isEmpty() {
        return members.isEmpty();
    }

    int memberCount() {
        return members.size();
    }

    /** Members in member id order (read-only use). */
    Iterable<ConsumerMember> members() {
        return members.values();
    }

    ConsumerMember member(String memberId) {
        return members.get(memberId);
    }

    Assignment targetOf(String memberId) {
        return target.of(memberId);
    }

    /** True when a member owns the partition, must revoke it, or is its target. */
    boolean isAssigned(String topic, int partition) {
        if (owners.containsKey(new TopicPartition(topic, partition))) {
            return true;
        }
        return target.contains(topic, partition);
    }

    /** "Empty", "Assigning" (target behind the group epoch), "Reconciling" or "Stable". */
    String state() {
        if (members.isEmpty()) {
            return "Empty";
        }
        if (target.epoch() < groupEpoch) {
            return "Assigning";
        }
        for (ConsumerMember m : members.values()) {
            if (m.memberEpoch != target.epoch()
                    || !m.pendingRevocation.isEmpty()
                    || !m.assigned.equals(targetOf(m.memberId))) {
                return "Reconciling";
            }
        }
        return "Stable";
    }

    // ---- heartbeat

    /**
     * Handles one ConsumerGroupHeartbeat.
     *
     * @param newMemberId supplies a fresh member id for a join without one
     * @param out receives the records of every state change
     */
    HeartbeatResult heartbeat(
            Heartbeat req,
            RequestOrigin origin,
            long nowMs,
            Supplier<String> newMemberId,
            List<CoordinatorRecord> out) {
        if (req.memberEpoch() < ConsumerMember.STATIC_LEFT_EPOCH) {
            return error(Errors.INVALID_REQUEST, "memberEpoch " + req.memberEpoch() + " is below -2", req);
        }
        if (req.serverAssignor() != null && !Assignors.isKnown(req.serverAssignor())) {
            return error(
                    Errors.UNSUPPORTED_ASSIGNOR,
                    "unknown serverAssignor " + req.serverAssignor() + ", known: " + Assignors.NAMES,
                    req);
        }
        if (req.rebalanceTimeoutMs() != -1 && req.rebalanceTimeoutMs() <= 0) {
            return error(Errors.INVALID_REQUEST, "rebalanceTimeoutMs must be positive or -1", req);
        }
        boolean noId = req.memberId() == null || req.memberId().isEmpty();
        if (req.memberEpoch() != JOIN_EPOCH && noId) {
            return error(Errors.INVALID_REQUEST, "memberId is required unless memberEpoch is 0", req);
        }
        return switch (req.memberEpoch()) {
            case JOIN_EPOCH -> join(req, origin, nowMs, noId ? newMemberId.get() : req.memberId(), out);
            case LEAVE_EPOCH -> leave(req, nowMs, out);
            case ConsumerMember.STATIC_LEFT_EPOCH -> staticLeave(req, nowMs, out);
            default -> existing(req, origin, nowMs, out);
        };
    }

    private HeartbeatResult join(
            Heartbeat req, RequestOrigin origin, long nowMs, String memberId, List<CoordinatorRecord> out) {
        if (req.subscribedTopicNames() == null) {
            return error(Errors.INVALID_REQUEST, "subscribedTopicNames is required when joining", req);
        }
        ConsumerMember m = members.get(memberId);
        MemberValue before = m == null ? null : m.toValue();
        boolean isNew = false;
        if (req.instanceId() != null) {
            String holder = staticMembers.get(req.instanceId());
            if (holder != null && !holder.equals(memberId)) {
                ConsumerMember h = members.get(holder);
                if (!h.staticLeft()) {
                    return error(
                            Errors.UNRELEASED_INSTANCE_ID,
                            "instance id " + req.instanceId() + " is held by live member " + holder,
                            req);
                }
                if (m != null) {
                    removeMember(m, nowMs, out);
                }
                m = takeOver(h, memberId, out);
                before = null;
            }
        }
        if (m == null) {
            if (members.size() >= config.maxGroupSize()) {
                return error(
                        Errors.GROUP_MAX_SIZE_REACHED,
                        "group " + groupId + " has " + members.size() + " members, group.max.size",
                        req);
            }
            m = new ConsumerMember(memberId);
            m.rebalanceTimeoutMs = config.defaultRebalanceTimeoutMs();
            members.put(memberId, m);
            isNew = true;
        } else if (m.staticLeft()) {
            // The static member comes back under its own member id: it keeps its partitions.
            m.memberEpoch = m.previousMemberEpoch;
        } else if (before != null) {
            // A known member rejoins: it has given up its partitions (it was fenced or restarted).
            release(m, m.assigned.union(m.pendingRevocation));
            m.assigned = Assignment.EMPTY;
            m.pendingRevocation = Assignment.EMPTY;
            m.revocationDeadlineMs = Long.MAX_VALUE;
            m.previousMemberEpoch = m.memberEpoch;
            m.memberEpoch = JOIN_EPOCH;
        }
        if (req.instanceId() != null) {
            if (m.instanceId != null && !m.instanceId.equals(req.instanceId())) {
                staticMembers.remove(m.instanceId, m.memberId);
            }
            m.instanceId = req.instanceId();
            staticMembers.put(req.instanceId(), memberId);
        }
        m.assignmentSent = false;
        return update(m, before, isNew, req, origin, nowMs, out);
    }

    /** The member {@code memberId} replaces the static member {@code left}: same epoch and partitions. */
    private ConsumerMember takeOver(ConsumerMember left, String memberId, List<CoordinatorRecord> out) {
        ConsumerMember m = new ConsumerMember(memberId);
        m.load(left.toValue());
        m.memberEpoch = left.previousMemberEpoch;
        m.revocationDeadlineMs = left.revocationDeadlineMs;
        members.remove(left.memberId);
        out.add(GroupRecords.member(groupId, left.memberId, null));
        members.put(memberId, m);
        for (TopicPartition tp : m.assigned.union(m.pendingRevocation).partitions()) {
            owners.put(tp, memberId);
        }
        target.rename(left.memberId, memberId, out);
        return m;
    }

    private HeartbeatResult leave(Heartbeat req, long nowMs, List<CoordinatorRecord> out) {
        ConsumerMember m = members.get(req.memberId());
        if (m == null) {
            return error(Errors.UNKNOWN_MEMBER_ID, "unknown member " + req.memberId(), req);
        }
        removeMember(m, nowMs, out);
        return new HeartbeatResult(
                Errors.NONE,
                null,
                m.memberId,
                LEAVE_EPOCH,
                config.consumerHeartbeatIntervalMs(),
                config.consumerSessionTimeoutMs(),
                null);
    }

    private HeartbeatResult staticLeave(Heartbeat req, long nowMs, List<CoordinatorRecord> out) {
        ConsumerMember m = members.get(req.memberId());
        if (m == null || m.staticLeft()) {
            return error(Errors.UNKNOWN_MEMBER_ID, "unknown member " + req.memberId(), req);
        }
        if (m.instanceId == null || !m.instanceId.equals(req.instanceId())) {
            return error(Errors.INVALID_REQUEST, "memberEpoch -2 needs the member's instanceId", req);
        }
        m.previousMemberEpoch = m.memberEpoch;
        m.memberEpoch = ConsumerMember.STATIC_LEFT_EPOCH;
        m.sessionDeadlineMs = nowMs + config.consumerSessionTimeoutMs();
        out.add(GroupRecords.member(groupId, m.memberId, m.toValue()));
        return new HeartbeatResult(
                Errors.NONE,
                null,
                m.memberId,
                ConsumerMember.STATIC_LEFT_EPOCH,
                config.consumerHeartbeatIntervalMs(),
                config.consumerSessionTimeoutMs(),
                null);
    }

    private HeartbeatResult existing(Heartbeat req, RequestOrigin origin, long nowMs, List<CoordinatorRecord> out) {
        ConsumerMember m = members.get(req.memberId());
        if (m == null || m.staticLeft()) {
            return error(Errors.UNKNOWN_MEMBER_ID, "unknown member " + req.memberId(), req);
        }
        if (req.instanceId() != null && !req.instanceId().equals(m.instanceId)) {
            return error(
                    Errors.INVALID_REQUEST,
                    "instanceId " + req.instanceId() + " is not member " + m.memberId + "'s",
                    req);
        }
        boolean current = req.memberEpoch() == m.memberEpoch;
        // The answer that moved the member to its epoch may have been lost: the previous epoch is
        // accepted while the member owns nothing it was not given.
        boolean lostAnswer = req.memberEpoch() == m.previousMemberEpoch
                && req.ownedPartitions() != null
                && req.ownedPartitions()
                        .minus(m.assigned.union(m.pendingRevocation))
                        .isEmpty();
        if (!current && !lostAnswer) {
            return error(
                    Errors.FENCED_MEMBER_EPOCH,
                    "member " + m.memberId + " is at epoch " + m.memberEpoch + ", the request has " + req.memberEpoch()
                            + "; rejoin with epoch 0",
                    req);
        }
        if (lostAnswer && !current) {
            m.assignmentSent = false;
        }
        return update(m, m.toValue(), false, req, origin, nowMs, out);
    }

    /** The common part of a join and a heartbeat: subscription, liveness, acknowledgement, reconcile. */
    private HeartbeatResult update(
            ConsumerMember m,
            MemberValue before,
            boolean isNew,
            Heartbeat req,
            RequestOrigin origin,
            long nowMs,
            List<CoordinatorRecord> out) {
        boolean bump = isNew;
        if (req.subscribedTopicNames() != null) {
            List<String> subs = List.copyOf(new TreeSet<>(req.subscribedTopicNames()));
            if (!subs.equals(m.subscribedTopics)) {
                m.subscribedTopics = subs;
                bump = true;
            }
        }
        if (req.serverAssignor() != null && !req.serverAssignor().equals(m.serverAssignor)) {
            m.serverAssignor = req.serverAssignor();
            bump = true;
        }
        if (req.rackId() != null) {
            m.rackId = req.rackId();
        }
        if (req.rebalanceTimeoutMs() != -1) {
            m.rebalanceTimeoutMs = req.rebalanceTimeoutMs();
        }
        m.clientId = origin.clientId();
        m.clientHost = origin.clientHost();
        m.sessionDeadlineMs = nowMs + config.consumerSessionTimeoutMs();
        if (bump) {
            bumpGroupEpoch(nowMs, out);
        }
        if (req.ownedPartitions() != null) {
            acknowledgeRevocation(m, req.ownedPartitions());
        }
        if (target.stale() && target.work(members.values()) <= INLINE_ASSIGNMENT_MAX_WORK) {
            computeTarget(nowMs, out);
        }
        reconcile(m, nowMs);
        if (!m.toValue().equals(before)) {
            out.add(GroupRecords.member(groupId, m.memberId, m.toValue()));
        }
        Assignment send = null;
        if (!m.assignmentSent
                || (req.ownedPartitions() != null && !req.ownedPartitions().equals(m.assigned))) {
            send = m.assigned;
            m.assignmentSent = true;
        }
        return new HeartbeatResult(
                Errors.NONE,
                null,
                m.memberId,
                m.memberEpoch,
                heartbeatIntervalMs(m),
                config.consumerSessionTimeoutMs(),
                send);
    }

    /** The interval for {@code m}'s next heartbeat: short while it or the group is in transition. */
    private int heartbeatIntervalMs(ConsumerMember m) {
        int interval = config.consumerHeartbeatIntervalMs();
        boolean transition = target.stale()
                || !m.pendingRevocation.isEmpty()
                || m.memberEpoch != target.epoch()
                || !m.assigned.equals(targetOf(m.memberId));
        return transition ? Math.min(interval, RECONCILING_HEARTBEAT_INTERVAL_MS) : interval;
    }

    private void acknowledgeRevocation(ConsumerMember m, Assignment owned) {
        if (!m.pendingRevocation.isEmpty() && owned.disjoint(m.pendingRevocation)) {
            release(m, m.pendingRevocation);
            m.pendingRevocation = Assignment.EMPTY;
            m.revocationDeadlineMs = Long.MAX_VALUE;
        }
    }

    /** Moves the member one step toward its target (see the class comment). */
    private void reconcile(ConsumerMember m, long nowMs) {
        if (!m.pendingRevocation.isEmpty() || m.staticLeft()) {
            return;
        }
        Assignment goal = targetOf(m.memberId);
        if (m.memberEpoch == target.epoch() && m.assigned.equals(goal)) {
            return;
        }
        Assignment revoke = m.assigned.minus(goal);
        if (!revoke.isEmpty()) {
            m.assigned = m.assigned.intersect(goal);
            m.pendingRevocation = revoke;
            m.revocationDeadlineMs = nowMs + m.rebalanceTimeoutMs;
            m.assignmentSent = false;
            return;
        }
        Assignment free = goal.minus(m.assigned).filter((t, p) -> !owners.containsKey(new TopicPartition(t, p)));
        if (!free.isEmpty()) {
            m.assigned = m.assigned.union(free);
            for (TopicPartition tp : free.partitions()) {
                owners.put(tp, m.memberId);
            }
            m.assignmentSent = false;
        }
        if (m.memberEpoch != target.epoch()) {
            m.previousMemberEpoch = m.memberEpoch;
            m.memberEpoch = target.epoch();
        }
    }

    private void release(ConsumerMember m, Assignment partitions) {
        for (TopicPartition tp : partitions.partitions()) {
            owners.remove(tp, m.memberId);
        }
    }

    private void removeMember(ConsumerMember m, long nowMs, List<CoordinatorRecord> out) {
        members.remove(m.memberId);
        if (m.instanceId != null) {
            staticMembers.remove(m.instanceId, m.memberId);
        }
        release(m, m.assigned.union(m.pendingRevocation));
        out.add(GroupRecords.member(groupId, m.memberId, null));
        target.remove(m.memberId, out);
        bumpGroupEpoch(nowMs, out);
    }

    private void bumpGroupEpoch(long nowMs, List<CoordinatorRecord> out) {
        groupEpoch++;
        rebalanced.run();
        assignor = chooseAssignor();
        emptySinceMs = members.isEmpty() ? nowMs : -1;
        out.add(GroupRecords.consumerGroup(groupId, toValue()));
        target.markStale(nowMs);
    }

    /** The assignor most members name (ties: alphabetical), the configured default when none names one. */
    private String chooseAssignor() {
        Map<String, Integer> votes = new TreeMap<>();
        for (ConsumerMember m : members.values()) {
            if (m.serverAssignor != null) {
                votes.merge(m.serverAssignor, 1, Integer::sum);
            }
        }
        String best = config.defaultAssignor();
        int bestVotes = 0;
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (e.getValue() > bestVotes) {
                best = e.getKey();
                bestVotes = e.getValue();
            }
        }
        return best;
    }

    // ---- target assignment

    /** True when {@link #computeTarget} has work. */
    boolean targetStale() {
        return target.stale();
    }

    /**
     * Computes the target assignment for the current group epoch and records it. If topic metadata
     * changed the result while the group epoch did not move, the group epoch is bumped first so that
     * members see a new target epoch.
     */
    void computeTarget(long nowMs, List<CoordinatorRecord> out) {
        Map<String, Assignment> result = target.assign(Assignors.get(assignor), members.values());
        if (target.differs(result, members.values()) && groupEpoch == target.epoch()) {
            groupEpoch++;
            rebalanced.run();
            out.add(GroupRecords.consumerGroup(groupId, toValue()));
        }
        target.install(result, members.values(), groupEpoch, out);
    }

    /** Marks the target stale when the partition counts of subscribed topics changed. */
    void onMetadataChange(long nowMs) {
        target.checkMetadata(members.values(), nowMs);
    }

    // ---- timers

    /** Removes members whose session or revocation deadline passed; returns their ids. */
    List<String> expire(long nowMs, List<CoordinatorRecord> out) {
        List<ConsumerMember> gone = new ArrayList<>();
        for (ConsumerMember m : members.values()) {
            if (m.sessionDeadlineMs <= nowMs || m.revocationDeadlineMs <= nowMs) {
                gone.add(m);
            }
        }
        List<String> ids = new ArrayList<>(gone.size());
        for (ConsumerMember m : gone) {
            removeMember(m, nowMs, out);
            ids.add(m.memberId);
        }
        return ids;
    }

    /** Earliest session or revocation deadline, or when the target became stale; MAX_VALUE for none. */
    long nextDeadlineMs() {
        long next = target.staleSinceMs();
        for (ConsumerMember m : members.values()) {
            next = Math.min(next, Math.min(m.sessionDeadlineMs, m.revocationDeadlineMs));
        }
        return next;
    }

    // ---- commits

    /**
     * Whether member {@code memberId} at {@code memberEpoch} may commit: NONE, UNKNOWN_MEMBER_ID,
     * STALE_MEMBER_EPOCH (older epoch) or FENCED_MEMBER_EPOCH (newer than the member's).
     */
    short checkCommitter(String memberId, int memberEpoch) {
        ConsumerMember m = memberId == null ? null : members.get(memberId);
        if (m == null || m.staticLeft()) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (memberEpoch > m.memberEpoch) {
            return Errors.FENCED_MEMBER_EPOCH;
        }
        if (memberEpoch < m.memberEpoch) {
            return Errors.STALE_MEMBER_EPOCH;
        }
        return Errors.NONE;
    }

    /** Per partition fencing: a checked committer may commit a partition it owns or must revoke. */
    short checkCommitPartition(String memberId, String topic, int partition) {
        return members.get(memberId).holds(topic, partition) ? Errors.NONE : Errors.STALE_MEMBER_EPOCH;
    }

    // ---- storage

    ConsumerGroupValue toValue() {
        return new ConsumerGroupValue(groupEpoch, assignor, emptySinceMs);
    }

    /** Every record of the stored state, for tests and snapshots. */
    void stateRecords(List<CoordinatorRecord> out) {
        out.add(GroupRecords.consumerGroup(groupId, toValue()));
        for (ConsumerMember m : members.values()) {
            out.add(GroupRecords.member(groupId, m.memberId, m.toValue()));
        }
        target.stateRecords(out);
    }

    void loadGroup(ConsumerGroupValue v) {
        groupEpoch = v.groupEpoch();
        assignor = Assignors.isKnown(v.assignor()) ? v.assignor() : config.defaultAssignor();
        emptySinceMs = v.emptySinceMs();
    }

    void loadMember(String memberId, MemberValue v) {
        if (v == null) {
            members.remove(memberId);
            return;
        }
        members.computeIfAbsent(memberId, ConsumerMember::new).load(v);
    }

    void loadTarget(String memberId, Assignment a) {
        target.load(memberId, a);
    }

    void loadTargetEpoch(Integer epoch) {
        target.loadEpoch(epoch);
    }

    /**
     * After a load: rebuilds owners and static members, restarts sessions and revocation deadlines at
     * {@code nowMs} and marks the target stale (metadata may have changed while nobody led).
     */
    void onLoaded(long nowMs) {
        owners.clear();
        staticMembers.clear();
        for (ConsumerMember m : members.values()) {
            for (TopicPartition tp : m.assigned.union(m.pendingRevocation).partitions()) {
                owners.put(tp, m.memberId);
            }
            if (m.instanceId != null) {
                staticMembers.put(m.instanceId, m.memberId);
            }
            m.sessionDeadlineMs = nowMs + config.consumerSessionTimeoutMs();
            m.revocationDeadlineMs = m.pendingRevocation.isEmpty() ? Long.MAX_VALUE : nowMs + m.rebalanceTimeoutMs;
        }
        target.onLoaded(!members.isEmpty(), nowMs);
    }

    private HeartbeatResult error(short code, String message, Heartbeat req) {
        return new HeartbeatResult(
                code,
                message,
                req.memberId(),
                req.memberEpoch(),
                config.consumerHeartbeatIntervalMs(),
                config.consumerSessionTimeoutMs(),
                null);
    }

    @Override
    public String toString() {
        return "ConsumerGroup[" + groupId + " epoch " + groupEpoch + " target " + target.epoch() + " members "
                + Objects.toString(members.keySet()) + "]";
    }
}
