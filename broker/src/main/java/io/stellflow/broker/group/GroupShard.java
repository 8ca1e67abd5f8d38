package io.stellflow.broker.group;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.broker.coordinator.CoordinatorShard;
import io.stellflow.broker.group.GroupRecords.JournalEntry;
import io.stellflow.broker.group.GroupRecords.OffsetValue;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.HeartbeatRequest;
import io.stellflow.protocol.message.HeartbeatResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.OffsetDeleteResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.SyncGroupRequest;
import io.stellflow.protocol.message.SyncGroupResponse;
import io.stellflow.protocol.message.TopicPartitions;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import io.stellflow.protocol.record.ControlRecordLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The group coordinator state of one {@code __consumer_offsets} partition: the request commands of
 * the group APIs (spec §6.6-6.11, {@code docs/protocol-additions.md} keys 20-25) on top of a {@link
 * GroupStore}. Each command applies its change and returns the records that store it ({@link
 * CoordinatorResult}); the runtime answers once they are committed.
 *
 * <p>Rules kept here: v0 commits are accepted from anyone (§6.6); v1 commits are fenced per
 * partition by member epoch (a member commits only partitions it owns or must still revoke, at its
 * current epoch: STALE_MEMBER_EPOCH, FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID otherwise); a v1
 * commit with memberEpoch -1 and no member id comes from outside the group (tools) and is accepted
 * only while the group has no member of our protocol. A commit that races its member's move to a new
 * epoch gets STALE_MEMBER_EPOCH; the client retries with the epoch of its next heartbeat. Journal:
 * every offset change except a consumer's forward commit (see {@link GroupConfig}) is recorded with
 * its principal, client, member, old and new offset. OffsetFetch never fails (an unknown group or
 * partition is offset -1, metadata "", error 0; §6.7). v0 responses carry only codes 0-27. The
 * request-level checks of spec §6.6/6.7 (null or empty groupId: INVALID_REQUEST header-only) are the
 * handler's.
 *
 * <p>Thread-safety: confined to the shard's runtime thread ({@link CoordinatorShard}).
 */
public final class GroupShard implements CoordinatorShard {
    private final GroupStore store;

    /** A shard whose new member ids end in random UUIDs, counting no rebalances. */
    public GroupShard(GroupConfig config, TopicPartitionCounts counts) {
        this(config, counts, () -> {});
    }

    /**
     * A shard whose new member ids end in random UUIDs.
     *
     * @param rebalanced run on the shard's thread once per group epoch bump of our protocol and per
     *     generation bump of a classic group made by a command or a timer (never by the load); the
     *     broker counts {@code stellflow.group.rebalance.count} with it, so it must be cheap and
     *     thread-safe across shards
     */
    public GroupShard(GroupConfig config, TopicPartitionCounts counts, Runnable rebalanced) {
        this(config, counts, () -> UUID.randomUUID().toString(), rebalanced);
    }

    /** A shard with the given source of member id suffixes (tests use a counter). */
    GroupShard(GroupConfig config, TopicPartitionCounts counts, Supplier<String> memberIdSuffixes) {
        this(config, counts, memberIdSuffixes, () -> {});
    }

    GroupShard(
            GroupConfig config, TopicPartitionCounts counts, Supplier<String> memberIdSuffixes, Runnable rebalanced) {
        this.store = new GroupStore(config, counts, memberIdSuffixes, rebalanced);
    }

    // ---- offsets

    /** OffsetCommit v0 (§6.6) or v1 (fenced by member epoch); {@code version} is the request's. */
    public CoordinatorResult<OffsetCommitResponse> commitOffsets(
            OffsetCommitRequest req, short version, RequestOrigin origin, long nowMs) {
        List<CoordinatorRecord> out = new ArrayList<>();
        String groupId = req.groupId();
        short memberCheck = Errors.NONE;
        boolean fenced = false;
        String source = GroupStore.SOURCE_COMMIT;
        String memberId = null;
        if (groupId == null || groupId.isEmpty()) {
            memberCheck = Errors.INVALID_REQUEST;
        } else if (version >= OffsetCommitRequest.VERSION_WITH_MEMBER_EPOCH) {
            ConsumerGroup g = store.consumer.get(groupId);
            boolean outside = req.memberEpoch() == OffsetCommitRequest.NO_MEMBER_EPOCH
                    && (req.memberId() == null || req.memberId().isEmpty());
            if (outside) {
                source = GroupStore.SOURCE_RESET;
                if (g != null && !g.isEmpty()) {
                    memberCheck = Errors.UNKNOWN_MEMBER_ID;
                }
            } else {
                memberId = req.memberId();
                memberCheck = g == null ? Errors.UNKNOWN_MEMBER_ID : g.checkCommitter(memberId, req.memberEpoch());
                fenced = true;
            }
        }
        List<OffsetCommitResponse.OffsetCommitTopicResponse> topics =
                new ArrayList<>(req.topics().size());
        for (OffsetCommitRequest.OffsetCommitTopic t : req.topics()) {
            List<OffsetCommitResponse.OffsetCommitPartitionResponse> parts =
                    new ArrayList<>(t.partitions().size());
            for (OffsetCommitRequest.OffsetCommitPartition p : t.partitions()) {
                short code = memberCheck;
                if (code == Errors.NONE && fenced) {
                    code = store.consumer.get(groupId).checkCommitPartition(memberId, t.topic(), p.partition());
                }
                if (code == Errors.NONE) {
                    code = store.commit(
                            groupId,
                            new TopicPartition(t.topic(), p.partition()),
                            p.offset(),
                            p.metadata(),
                            origin,
                            memberId,
                            source,
                            nowMs,
                            out);
                }
                parts.add(new OffsetCommitResponse.OffsetCommitPartitionResponse(p.partition(), code));
            }
            topics.add(new OffsetCommitResponse.OffsetCommitTopicResponse(t.topic(), parts));
        }
        return new CoordinatorResult<>(out, new OffsetCommitResponse(topics));
    }

    /**
     * TxnOffsetCommit v0 ({@code docs/exactly-once.md} "Transactional offset commits"): the offsets
     * become pending offsets of the producer's transaction, written as a transactional batch of that
     * producer (the handler has registered this partition in the transaction and passes its
     * sequence); OffsetFetch, lag and describe see them only once the COMMIT marker applies them
     * ({@link #completeTransaction}). Per partition: INVALID_PRODUCER_EPOCH for an epoch older than
     * the producer's open transaction here (a fenced instance); with a member id or epoch, the member
     * checks of OffsetCommit v1 (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH, FENCED_MEMBER_EPOCH); without
     * (null or "" and -1) none, as Kafka's TxnOffsetCommit before KIP-447: the producer epoch fences;
     * then the checks of a plain commit (INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION). Not journaled.
     *
     * @param transactionSequence the transaction's sequence from the registration (&gt;= 0)
     */
    public CoordinatorResult<OffsetCommitResponse> txnCommitOffsets(
            TxnOffsetCommitRequest req, long transactionSequence, long nowMs) {
        List<CoordinatorRecord> out = new ArrayList<>();
        String groupId = req.groupId();
        short check = Errors.NONE;
        boolean member = req.memberEpoch() != OffsetCommitRequest.NO_MEMBER_EPOCH
                || (req.memberId() != null && !req.memberId().isEmpty());
        ConsumerGroup g = null;
        if (groupId == null || groupId.isEmpty() || req.producerId() < 0) {
            check = Errors.INVALID_REQUEST;
        } else if (!store.txn.epochAllowed(req.producerId(), req.producerEpoch())) {
            check = Errors.INVALID_PRODUCER_EPOCH;
        } else if (member) {
            g = store.consumer.get(groupId);
            check = g == null ? Errors.UNKNOWN_MEMBER_ID : g.checkCommitter(req.memberId(), req.memberEpoch());
        }
        List<OffsetCommitResponse.OffsetCommitTopicResponse> topics =
                new ArrayList<>(req.topics().size());
        for (OffsetCommitRequest.OffsetCommitTopic t : req.topics()) {
            List<OffsetCommitResponse.OffsetCommitPartitionResponse> parts =
                    new ArrayList<>(t.partitions().size());
            for (OffsetCommitRequest.OffsetCommitPartition p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                short code = check;
                if (code == Errors.NONE && member) {
                    code = g.checkCommitPartition(req.memberId(), t.topic(), p.partition());
                }
                if (code == Errors.NONE) {
                    code = store.checkCommit(tp, p.offset(), p.metadata());
                }
                if (code == Errors.NONE) {
                    OffsetValue v = new OffsetValue(p.offset(), -1, p.metadata() == null ? "" : p.metadata(), nowMs);
                    store.txn.add(
                            req.producerId(),
                            req.producerEpoch(),
                            transactionSequence,
                            groupId,
                            tp,
                            v,
                            store.txn.nextPosition());
                    out.add(GroupRecords.offset(groupId, tp.topic(), tp.partition(), v));
                }
                parts.add(new OffsetCommitResponse.OffsetCommitPartitionResponse(p.partition(), code));
            }
            topics.add(new OffsetCommitResponse.OffsetCommitTopicResponse(t.topic(), parts));
        }
        CoordinatorResult.Transaction txn = out.isEmpty()
                ? null
                : new CoordinatorResult.Transaction(req.producerId(), req.producerEpoch(), transactionSequence);
        return new CoordinatorResult<>(out, new OffsetCommitResponse(topics), txn);
    }

    /**
     * The COMMIT ({@code commit}) or ABORT marker of {@code producerId}'s transaction was written to
     * this partition (and replicated): its pending offsets become the groups' committed offsets, or
     * are dropped. Writes nothing (the marker is the record). A marker of an earlier transaction than
     * the pending one, or for a producer with nothing pending, changes nothing.
     *
     * @return how many offsets were applied
     */
    public CoordinatorResult<Integer> completeTransaction(
            long producerId, short producerEpoch, long transactionSequence, boolean commit) {
        List<TxnOffsets.Pending> applied = store.txn.complete(producerId, producerEpoch, transactionSequence, commit);
        store.applyTransactional(applied);
        return CoordinatorResult.of(applied.size());
    }

    /** Whether a transaction's offset for {@code groupId}'s {@code topic}-{@code partition} waits for its marker. */
    public boolean hasPendingTransactionalOffset(String groupId, String topic, int partition) {
        return store.txn.hasPending(groupId, new TopicPartition(topic, partition));
    }

    /**
     * OffsetFetch v0 (§6.7) or v1 (null topics = every partition the group has an offset for). Never
     * an error: no offset is -1 and "".
     */
    public OffsetFetchResponse fetchOffsets(OffsetFetchRequest req, short version) {
        List<OffsetFetchResponse.OffsetFetchTopicResponse> topics = new ArrayList<>();
        if (req.topics() == null) {
            GroupOffsets g = store.offsets.get(req.groupId());
            Map<String, List<OffsetFetchResponse.OffsetFetchPartitionResponse>> byTopic = new LinkedHashMap<>();
            if (g != null) {
                g.all()
                        .forEach((tp, v) -> byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>())
                                .add(new OffsetFetchResponse.OffsetFetchPartitionResponse(
                                        tp.partition(), v.offset(), v.metadata(), Errors.NONE)));
            }
            byTopic.forEach((t, ps) -> topics.add(new OffsetFetchResponse.OffsetFetchTopicResponse(t, ps)));
        } else {
            for (OffsetFetchRequest.OffsetFetchTopic t : req.topics()) {
                List<OffsetFetchResponse.OffsetFetchPartitionResponse> parts = new ArrayList<>();
                for (int p : t.partitions()) {
                    OffsetValue v = store.fetch(req.groupId(), new TopicPartition(t.topic(), p));
                    parts.add(new OffsetFetchResponse.OffsetFetchPartitionResponse(
                            p,
                            v == null ? OffsetFetchResponse.NO_OFFSET : v.offset(),
                            v == null || v.metadata() == null ? "" : v.metadata(),
                            Errors.NONE));
                }
                topics.add(new OffsetFetchResponse.OffsetFetchTopicResponse(t.topic(), parts));
            }
        }
        return new OffsetFetchResponse(topics, Errors.NONE);
    }

    // ---- classic (v0) protocol

    /**
     * JoinGroup v0 (§6.10, decision 9.m): completes at once. INVALID_REQUEST (3) for an empty
     * groupId, a session timeout outside the configured bounds, or a group id held by a group of our
     * protocol with members.
     */
    public CoordinatorResult<JoinGroupResponse> joinGroup(JoinGroupRequest req, RequestOrigin origin, long nowMs) {
        GroupConfig c = store.config;
        if (req.groupId() == null
                || req.groupId().isEmpty()
                || req.sessionTimeoutMs() < c.classicMinSessionTimeoutMs()
                || req.sessionTimeoutMs() > c.classicMaxSessionTimeoutMs()) {
            return CoordinatorResult.of(new JoinGroupResponse(Errors.INVALID_REQUEST, -1, null, null));
        }
        List<CoordinatorRecord> out = new ArrayList<>();
        ClassicGroup g = store.classicForJoin(req.groupId(), out);
        if (g == null) {
            return CoordinatorResult.of(new JoinGroupResponse(Errors.INVALID_REQUEST, -1, null, null));
        }
        String memberId = req.memberId() == null || req.memberId().isEmpty()
                ? store.newMemberId(origin.clientId())
                : req.memberId();
        ClassicGroup.JoinResult r = g.join(memberId, origin, req.sessionTimeoutMs(), nowMs);
        store.writeClassic(g, out);
        return new CoordinatorResult<>(
                out, new JoinGroupResponse(Errors.NONE, r.generation(), r.memberId(), r.leaderId()));
    }

    /** SyncGroup v0 (§6.11): 0 for a known member at the current generation, else 1. Writes nothing. */
    public CoordinatorResult<SyncGroupResponse> syncGroup(SyncGroupRequest req, long nowMs) {
        ClassicGroup g = store.classic.get(req.groupId());
        short code = g == null ? Errors.UNKNOWN_SERVER_ERROR : g.sync(req.generationId(), req.memberId());
        return CoordinatorResult.of(new SyncGroupResponse(code));
    }

    /** Heartbeat v0 (§6.9): liveness of a known member even on a stale generation. Writes nothing. */
    public CoordinatorResult<HeartbeatResponse> heartbeat(HeartbeatRequest req, long nowMs) {
        ClassicGroup g = store.classic.get(req.groupId());
        short code = g == null ? Errors.UNKNOWN_SERVER_ERROR : g.heartbeat(req.generationId(), req.memberId(), nowMs);
        return CoordinatorResult.of(new HeartbeatResponse(code));
    }

    // ---- our protocol

    /** ConsumerGroupHeartbeat v0 (see {@link ConsumerGroup}). */
    public CoordinatorResult<ConsumerGroupHeartbeatResponse> consumerGroupHeartbeat(
            ConsumerGroupHeartbeatRequest req, RequestOrigin origin, long nowMs) {
        if (req.groupId() == null || req.groupId().isEmpty()) {
            return CoordinatorResult.of(
                    ConsumerGroupHeartbeatResponse.error(Errors.INVALID_REQUEST, "groupId is required"));
        }
        List<CoordinatorRecord> out = new ArrayList<>();
        ConsumerGroup g = store.consumerForHeartbeat(req.groupId(), out);
        if (g == null) {
            return CoordinatorResult.of(ConsumerGroupHeartbeatResponse.error(
                    Errors.INVALID_REQUEST, "group " + req.groupId() + " has members of the classic protocol"));
        }
        ConsumerGroup.HeartbeatResult r = g.heartbeat(
                new ConsumerGroup.Heartbeat(
                        req.memberId(),
                        req.memberEpoch(),
                        req.instanceId(),
                        req.rackId(),
                        req.rebalanceTimeoutMs(),
                        req.subscribedTopicNames(),
                        req.serverAssignor(),
                        toAssignment(req.ownedPartitions())),
                origin,
                nowMs,
                store.memberIdsFor(origin.clientId()),
                out);
        store.dropIfUnused(g);
        store.noteDeadline(g.nextDeadlineMs());
        ConsumerGroupHeartbeatResponse resp = r.errorCode() != Errors.NONE
                ? ConsumerGroupHeartbeatResponse.error(r.errorCode(), r.errorMessage())
                : new ConsumerGroupHeartbeatResponse(
                        Errors.NONE,
                        null,
                        r.memberId(),
                        r.memberEpoch(),
                        r.heartbeatIntervalMs(),
                        r.sessionTimeoutMs(),
                        toTopicPartitions(r.assignment()));
        return new CoordinatorResult<>(out, resp);
    }

    // ---- admin

    /** Groups of this shard whose state is in {@code statesFilter} (case-insensitive; empty = all). */
    public List<ListGroupsResponse.ListedGroup> listGroups(List<String> statesFilter) {
        Set<String> wanted = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        wanted.addAll(statesFilter);
        List<ListGroupsResponse.ListedGroup> out = new ArrayList<>();
        TreeSet<String> ids = new TreeSet<>(store.classic.keySet());
        ids.addAll(store.consumer.keySet());
        ids.addAll(store.offsets.keySet());
        for (String id : ids) {
            DescribedGroup d = describeGroup(id);
            if (wanted.isEmpty() || wanted.contains(d.state())) {
                out.add(new ListGroupsResponse.ListedGroup(id, d.protocolType(), d.state()));
            }
        }
        return out;
    }

    /**
     * One group's description; GROUP_ID_NOT_FOUND (state "Dead") when unknown. A group with offsets
     * only (commits from outside any group) is an empty classic group.
     */
    public DescribedGroup describeGroup(String groupId) {
        ConsumerGroup g = store.consumer.get(groupId);
        if (g != null) {
            List<DescribedMember> members = new ArrayList<>();
            for (ConsumerMember m : g.members()) {
                members.add(new DescribedMember(
                        m.memberId,
                        m.instanceId,
                        m.clientId,
                        m.clientHost,
                        m.memberEpoch,
                        m.subscribedTopics,
                        toTopicPartitions(m.assigned),
                        toTopicPartitions(m.pendingRevocation)));
            }
            return new DescribedGroup(
                    Errors.NONE,
                    groupId,
                    ListGroupsResponse.PROTOCOL_TYPE_CONSUMER,
                    g.state(),
                    g.groupEpoch(),
                    g.targetEpoch(),
                    g.assignor(),
                    members);
        }
        ClassicGroup c = store.classic.get(groupId);
        if (c != null) {
            List<DescribedMember> members = new ArrayList<>();
            for (String id : c.memberIds()) {
                String[] client = c.clientOf(id);
                members.add(new DescribedMember(
                        id, null, client[0], client[1], c.generation(), List.of(), List.of(), List.of()));
            }
            String state = c.isEmpty() ? DescribeGroupsResponse.STATE_EMPTY : DescribeGroupsResponse.STATE_STABLE;
            return new DescribedGroup(
                    Errors.NONE,
                    groupId,
                    ListGroupsResponse.PROTOCOL_TYPE_CLASSIC,
                    state,
                    c.generation(),
                    c.generation(),
                    null,
                    members);
        }
        if (store.offsets.containsKey(groupId)) {
            return new DescribedGroup(
                    Errors.NONE,
                    groupId,
                    ListGroupsResponse.PROTOCOL_TYPE_CLASSIC,
                    DescribeGroupsResponse.STATE_EMPTY,
                    0,
                    0,
                    null,
                    List.of());
        }
        return DescribedGroup.error(groupId, Errors.GROUP_ID_NOT_FOUND);
    }

    /** Deletes a group and its offsets: NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND. */
    public CoordinatorResult<Short> deleteGroup(String groupId, RequestOrigin origin, long nowMs) {
        List<CoordinatorRecord> out = new ArrayList<>();
        short code = store.deleteGroup(groupId, out);
        return new CoordinatorResult<>(out, code);
    }

    /**
     * Deletes committed offsets (journaled): per partition GROUP_SUBSCRIBED_TO_TOPIC while assigned,
     * UNKNOWN_TOPIC_OR_PARTITION when nothing is committed; GROUP_ID_NOT_FOUND for an unknown group.
     */
    public CoordinatorResult<OffsetDeleteResponse> deleteOffsets(
            OffsetDeleteRequest req, RequestOrigin origin, long nowMs) {
        if (!store.exists(req.groupId())) {
            return CoordinatorResult.of(new OffsetDeleteResponse(Errors.GROUP_ID_NOT_FOUND, List.of()));
        }
        List<CoordinatorRecord> out = new ArrayList<>();
        List<OffsetDeleteResponse.OffsetDeleteTopicResponse> topics = new ArrayList<>();
        for (TopicPartitions t : req.topics()) {
            List<OffsetDeleteResponse.OffsetDeletePartitionResponse> parts = new ArrayList<>();
            for (int p : t.partitions()) {
                short code = store.deleteOffset(req.groupId(), new TopicPartition(t.topic(), p), origin, nowMs, out);
                parts.add(new OffsetDeleteResponse.OffsetDeletePartitionResponse(p, code));
            }
            topics.add(new OffsetDeleteResponse.OffsetDeleteTopicResponse(t.topic(), parts));
        }
        return new CoordinatorResult<>(out, new OffsetDeleteResponse(Errors.NONE, topics));
    }

    /** The group's offset-change journal, newest first; GROUP_ID_NOT_FOUND for an unknown group. */
    public OffsetHistoryResponse offsetHistory(String groupId, int maxEntries) {
        if (!store.exists(groupId)) {
            return new OffsetHistoryResponse(Errors.GROUP_ID_NOT_FOUND, List.of());
        }
        List<OffsetHistoryResponse.OffsetHistoryEntry> entries = new ArrayList<>();
        for (JournalEntry e : store.history(groupId, maxEntries)) {
            entries.add(new OffsetHistoryResponse.OffsetHistoryEntry(
                    e.timestampMs(),
                    e.topic(),
                    e.partition(),
                    e.oldOffset(),
                    e.newOffset(),
                    e.source(),
                    e.principal(),
                    e.clientId(),
                    e.memberId()));
        }
        return new OffsetHistoryResponse(Errors.NONE, entries);
    }

    /** A topic was deleted: every group's offsets for it go (a recreated topic starts clean). */
    public CoordinatorResult<Void> deleteTopicOffsets(Set<String> deletedTopics, long nowMs) {
        List<CoordinatorRecord> out = new ArrayList<>();
        store.deleteTopicOffsets(deletedTopics, nowMs, out);
        return new CoordinatorResult<>(out, null);
    }

    /** Topic metadata changed: recomputes the targets of groups whose subscribed partition counts moved. */
    public CoordinatorResult<Void> onMetadataChange(long nowMs) {
        List<CoordinatorRecord> out = new ArrayList<>();
        store.onMetadataChange(nowMs, out);
        return new CoordinatorResult<>(out, null);
    }

    /** Number of groups (either protocol, or offsets only) on this shard; O(groups), no allocation. */
    public int groupCount() {
        return store.groupCount();
    }

    /** {@link #groupCount()}: the runtime publishes it for {@code stellflow.coordinator.group.count}. */
    @Override
    public long entryCount() {
        return store.groupCount();
    }

    // ---- CoordinatorShard

    @Override
    public void replay(long offset, byte[] key, byte[] value) {
        store.txn.observe(offset);
        store.replay(key, value);
    }

    /** An offset record of a transactional batch: pending for {@code producerId} until its marker. */
    @Override
    public void replayTransactional(long offset, long producerId, short producerEpoch, byte[] key, byte[] value) {
        store.txn.observe(offset);
        if (!(GroupRecords.decode(key, value) instanceof GroupRecords.OffsetRecord r) || r.value() == null) {
            throw new IllegalArgumentException("a transactional record that is not an offset");
        }
        store.txn.add(
                producerId,
                producerEpoch,
                -1,
                r.group(),
                new TopicPartition(r.topic(), r.partition()),
                r.value(),
                offset);
    }

    @Override
    public void replayMarker(
            long offset, long producerId, short producerEpoch, short controlType, long transactionSequence) {
        store.txn.observe(offset);
        if (controlType == ControlRecordLayout.BEGIN) {
            store.txn.begin(producerId, producerEpoch, transactionSequence);
        } else {
            store.applyTransactional(store.txn.complete(
                    producerId, producerEpoch, transactionSequence, controlType == ControlRecordLayout.COMMIT));
        }
    }

    @Override
    public void onLoaded(long nowMs) {
        store.onLoaded(nowMs);
    }

    @Override
    public CoordinatorResult<Void> poll(long nowMs) {
        List<CoordinatorRecord> out = new ArrayList<>();
        store.poll(nowMs, out);
        return new CoordinatorResult<>(out, null);
    }

    @Override
    public long nextDeadlineMs() {
        return store.nextDeadlineMs();
    }

    /** Every stored record of the current state, canonical order (the replay test compares these). */
    List<CoordinatorRecord> stateRecords() {
        return store.stateRecords();
    }

    private static Assignment toAssignment(List<TopicPartitions> list) {
        if (list == null) {
            return null;
        }
        Map<String, List<Integer>> m = new LinkedHashMap<>();
        for (TopicPartitions tp : list) {
            m.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).addAll(tp.partitions());
        }
        return Assignment.of(m);
    }

    private static List<TopicPartitions> toTopicPartitions(Assignment a) {
        if (a == null) {
            return null;
        }
        List<TopicPartitions> out = new ArrayList<>(a.byTopic().size());
        a.byTopic().forEach((t, ps) -> out.add(new TopicPartitions(t, List.copyOf(ps))));
        return out;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "GroupShard[%d groups]", groupCount());
    }
}
