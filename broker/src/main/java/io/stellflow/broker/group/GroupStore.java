package io.stellflow.broker.group;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.group.GroupRecords.ClassicGroupRecord;
import io.stellflow.broker.group.GroupRecords.ConsumerGroupRecord;
import io.stellflow.broker.group.GroupRecords.Decoded;
import io.stellflow.broker.group.GroupRecords.JournalRecord;
import io.stellflow.broker.group.GroupRecords.MemberRecord;
import io.stellflow.broker.group.GroupRecords.OffsetRecord;
import io.stellflow.broker.group.GroupRecords.OffsetValue;
import io.stellflow.broker.group.GroupRecords.TargetEpochRecord;
import io.stellflow.broker.group.GroupRecords.TargetMemberRecord;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Every group and committed offset of one {@code __consumer_offsets} partition: the maps, the load
 * (replay), the timers (sessions, target assignments, offsets retention) and the offset commands.
 * {@link GroupShard} translates requests to these calls. A group id names at most one classic group
 * or one consumer group, plus its offsets; an empty group of one protocol is replaced when a member
 * of the other arrives.
 *
 * <p>Offsets retention (KIP-211): the offsets of a group without members expire {@code
 * offsetsRetentionMs} after the later of the commit and the time the group became empty; a group
 * that never had members (commits from outside) counts from the commit. A group left with neither
 * members nor offsets is deleted (tombstones for all its keys).
 *
 * <p>Thread-safety: confined to the shard's thread.
 */
final class GroupStore {
    /** Journal source of a commit (v0, a member of our protocol, or from outside the group). */
    static final String SOURCE_COMMIT = OffsetHistoryResponse.SOURCE_COMMIT;

    /** Journal source of a v1 commit from outside the group (tools: reset-offsets). */
    static final String SOURCE_RESET = OffsetHistoryResponse.SOURCE_RESET;

    static final String SOURCE_DELETE = OffsetHistoryResponse.SOURCE_DELETE;
    static final String SOURCE_EXPIRE = "expire";
    static final String SOURCE_TOPIC_DELETED = "topic-deleted";

    /** Origin of changes the coordinator makes on its own (expiry, topic deletion). */
    static final RequestOrigin SYSTEM = new RequestOrigin("SYSTEM", "", "");

    final GroupConfig config;
    final TopicPartitionCounts counts;
    private final Supplier<String> memberIds;
    /** Run per live group epoch or generation bump (the groups get it; replay never bumps). */
    private final Runnable rebalanced;

    final Map<String, ClassicGroup> classic = new HashMap<>();
    final Map<String, ConsumerGroup> consumer = new HashMap<>();
    final Map<String, GroupOffsets> offsets = new HashMap<>();
    /** Transactional offsets waiting for their transaction's marker. */
    final TxnOffsets txn = new TxnOffsets();

    /** Runs every {@code offsetsRetentionCheckIntervalMs} from the load (a no-op scan when idle). */
    private long nextRetentionCheckMs = Long.MAX_VALUE;
    /** A lower bound of the earliest member deadline (exact after each poll). */
    private long nextMemberDeadlineMs = Long.MAX_VALUE;

    GroupStore(GroupConfig config, TopicPartitionCounts counts, Supplier<String> memberIds, Runnable rebalanced) {
        this.rebalanced = rebalanced;
        this.config = config;
        this.counts = counts;
        this.memberIds = memberIds;
    }

    /** A new member id: the client id (when given), a dash and a unique suffix. */
    String newMemberId(String clientId) {
        String suffix = memberIds.get();
        return clientId == null || clientId.isEmpty() ? suffix : clientId + "-" + suffix;
    }

    Supplier<String> memberIdsFor(String clientId) {
        return () -> newMemberId(clientId);
    }

    /** Distinct group ids over the three maps; no allocation (the runtime publishes it for the gauge). */
    int groupCount() {
        int n = offsets.size();
        for (String id : classic.keySet()) {
            if (!offsets.containsKey(id)) {
                n++;
            }
        }
        for (String id : consumer.keySet()) {
            if (!offsets.containsKey(id) && !classic.containsKey(id)) {
                n++;
            }
        }
        return n;
    }

    boolean exists(String groupId) {
        return classic.containsKey(groupId) || consumer.containsKey(groupId) || offsets.containsKey(groupId);
    }

    /** True when the group has a member of either protocol. */
    boolean hasMembers(String groupId) {
        ClassicGroup c = classic.get(groupId);
        ConsumerGroup g = consumer.get(groupId);
        return (c != null && !c.isEmpty()) || (g != null && !g.isEmpty());
    }

    /**
     * The classic group {@code groupId}, created when absent; null when a non-empty consumer group
     * holds the id (an empty one is deleted, with tombstones in {@code out}).
     */
    ClassicGroup classicForJoin(String groupId, List<CoordinatorRecord> out) {
        ConsumerGroup g = consumer.get(groupId);
        if (g != null) {
            if (!g.isEmpty()) {
                return null;
            }
            dropConsumerGroup(g, out);
        }
        return classic.computeIfAbsent(groupId, id -> new ClassicGroup(id, rebalanced));
    }

    /** The consumer group {@code groupId}, created when absent; null when a non-empty classic group holds it. */
    ConsumerGroup consumerForHeartbeat(String groupId, List<CoordinatorRecord> out) {
        ClassicGroup c = classic.get(groupId);
        if (c != null) {
            if (!c.isEmpty()) {
                return null;
            }
            classic.remove(groupId);
            out.add(GroupRecords.classicGroup(groupId, null));
        }
        return consumer.computeIfAbsent(groupId, id -> new ConsumerGroup(id, config, counts, rebalanced));
    }

    /** Forgets a consumer group a failed first heartbeat created (nothing of it was written). */
    void dropIfUnused(ConsumerGroup g) {
        if (g.groupEpoch() == 0 && g.isEmpty()) {
            consumer.remove(g.groupId(), g);
        }
    }

    void writeClassic(ClassicGroup g, List<CoordinatorRecord> out) {
        out.add(GroupRecords.classicGroup(g.groupId(), g.toValue()));
        noteDeadline(g.nextDeadlineMs());
    }

    void noteDeadline(long deadlineMs) {
        nextMemberDeadlineMs = Math.min(nextMemberDeadlineMs, deadlineMs);
    }

    private void dropConsumerGroup(ConsumerGroup g, List<CoordinatorRecord> out) {
        consumer.remove(g.groupId());
        out.add(GroupRecords.targetEpoch(g.groupId(), null));
        out.add(GroupRecords.consumerGroup(g.groupId(), null));
    }

    // ---- offsets

    /**
     * Commits one partition's offset; returns the partition's error code (INVALID_REQUEST for a
     * negative offset or metadata over {@code offset.metadata.max.bytes}, UNKNOWN_TOPIC_OR_PARTITION
     * for a partition the metadata does not know). A change of offset is journaled unless it is a
     * forward {@code commit} and {@code journalConsumerCommits} is off.
     */
    /**
     * The per-partition checks of a commit, plain or transactional: INVALID_REQUEST for a negative
     * offset or metadata longer than {@code offset.metadata.max.bytes}, UNKNOWN_TOPIC_OR_PARTITION.
     */
    short checkCommit(TopicPartition tp, long offset, String metadata) {
        if (offset < 0) {
            return Errors.INVALID_REQUEST;
        }
        String md = metadata == null ? "" : metadata;
        if (md.getBytes(StandardCharsets.UTF_8).length > config.offsetMetadataMaxBytes()) {
            return Errors.INVALID_REQUEST;
        }
        if (tp.partition() < 0 || tp.partition() >= counts.partitionCount(tp.topic())) {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        return Errors.NONE;
    }

    /** Makes the offsets of a committed transaction the groups' committed offsets (nothing written). */
    void applyTransactional(List<TxnOffsets.Pending> committed) {
        for (TxnOffsets.Pending p : committed) {
            offsets.computeIfAbsent(p.groupId(), id -> new GroupOffsets(id, config.offsetHistorySlots(), txn))
                    .applyTransactional(p.tp(), p.value());
        }
    }

    short commit(
            String groupId,
            TopicPartition tp,
            long offset,
            String metadata,
            RequestOrigin origin,
            String memberId,
            String source,
            long nowMs,
            List<CoordinatorRecord> out) {
        short code = checkCommit(tp, offset, metadata);
        if (code != Errors.NONE) {
            return code;
        }
        String md = metadata == null ? "" : metadata;
        GroupOffsets g = offsets.computeIfAbsent(groupId, id -> new GroupOffsets(id, config.offsetHistorySlots(), txn));
        OffsetValue old = g.get(tp);
        long oldOffset = old == null ? -1 : old.offset();
        g.put(tp, new OffsetValue(offset, -1, md, nowMs), out);
        boolean routine = SOURCE_COMMIT.equals(source) && offset >= oldOffset && !config.journalConsumerCommits();
        if (offset != oldOffset && !routine) {
            g.journal(nowMs, origin, memberId, tp, oldOffset, offset, source, out);
        }
        return Errors.NONE;
    }

    /** The journal of a group, newest first; empty when it has none. */
    List<GroupRecords.JournalEntry> history(String groupId, int maxEntries) {
        GroupOffsets g = offsets.get(groupId);
        return g == null ? List.of() : g.history(maxEntries);
    }

    /** The committed offset, or null when none (including an unknown group). */
    OffsetValue fetch(String groupId, TopicPartition tp) {
        GroupOffsets g = offsets.get(groupId);
        return g == null ? null : g.get(tp);
    }

    /**
     * Deletes one partition's offset: GROUP_SUBSCRIBED_TO_TOPIC while a member of our protocol is
     * assigned the partition or the classic group has members (their assignment is client-side),
     * UNKNOWN_TOPIC_OR_PARTITION when nothing is committed, else NONE (journaled as "delete").
     */
    short deleteOffset(
            String groupId, TopicPartition tp, RequestOrigin origin, long nowMs, List<CoordinatorRecord> out) {
        ConsumerGroup g = consumer.get(groupId);
        ClassicGroup c = classic.get(groupId);
        if ((g != null && g.isAssigned(tp.topic(), tp.partition())) || (c != null && !c.isEmpty())) {
            return Errors.GROUP_SUBSCRIBED_TO_TOPIC;
        }
        GroupOffsets o = offsets.get(groupId);
        OffsetValue old = o == null ? null : o.remove(tp, out);
        if (old == null) {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        o.journal(nowMs, origin, null, tp, old.offset(), -1, SOURCE_DELETE, out);
        return Errors.NONE;
    }

    /** Deletes every group's offsets of the deleted topics (journaled as "topic-deleted"). */
    void deleteTopicOffsets(Set<String> topics, long nowMs, List<CoordinatorRecord> out) {
        for (GroupOffsets o : offsets.values()) {
            for (TopicPartition tp : o.all().keySet()) {
                if (topics.contains(tp.topic())) {
                    OffsetValue old = o.remove(tp, out);
                    o.journal(nowMs, SYSTEM, null, tp, old.offset(), -1, SOURCE_TOPIC_DELETED, out);
                }
            }
        }
    }

    /** Deletes a group: NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND when unknown. */
    short deleteGroup(String groupId, List<CoordinatorRecord> out) {
        if (!exists(groupId)) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (hasMembers(groupId)) {
            return Errors.NON_EMPTY_GROUP;
        }
        removeGroup(groupId, out);
        return Errors.NONE;
    }

    private void removeGroup(String groupId, List<CoordinatorRecord> out) {
        if (classic.remove(groupId) != null) {
            out.add(GroupRecords.classicGroup(groupId, null));
        }
        ConsumerGroup g = consumer.get(groupId);
        if (g != null) {
            dropConsumerGroup(g, out);
        }
        GroupOffsets o = offsets.remove(groupId);
        if (o != null) {
            o.clear(out);
        }
    }

    // ---- timers

    /** Runs due expirations and stale target assignments. */
    void poll(long nowMs, List<CoordinatorRecord> out) {
        if (nowMs >= nextMemberDeadlineMs) {
            long next = Long.MAX_VALUE;
            for (ClassicGroup c : classic.values()) {
                if (!c.expire(nowMs).isEmpty()) {
                    out.add(GroupRecords.classicGroup(c.groupId(), c.toValue()));
                }
                next = Math.min(next, c.nextDeadlineMs());
            }
            for (ConsumerGroup g : consumer.values()) {
                g.expire(nowMs, out);
            }
            nextMemberDeadlineMs = next;
        }
        for (ConsumerGroup g : consumer.values()) {
            if (g.targetStale()) {
                g.computeTarget(nowMs, out);
            }
            nextMemberDeadlineMs = Math.min(nextMemberDeadlineMs, g.nextDeadlineMs());
        }
        if (nowMs >= nextRetentionCheckMs) {
            expireOffsets(nowMs, out);
            nextRetentionCheckMs = nowMs + config.offsetsRetentionCheckIntervalMs();
        }
    }

    long nextDeadlineMs() {
        return Math.min(nextMemberDeadlineMs, nextRetentionCheckMs);
    }

    private void expireOffsets(long nowMs, List<CoordinatorRecord> out) {
        Set<String> ids = new TreeSet<>(offsets.keySet());
        ids.addAll(classic.keySet());
        ids.addAll(consumer.keySet());
        for (String groupId : ids) {
            if (hasMembers(groupId)) {
                continue;
            }
            long emptySince = emptySinceMs(groupId);
            GroupOffsets o = offsets.get(groupId);
            if (o != null) {
                for (Map.Entry<TopicPartition, OffsetValue> e : o.all().entrySet()) {
                    long base = Math.max(emptySince, e.getValue().commitTimestampMs());
                    if (nowMs - base >= config.offsetsRetentionMs()) {
                        o.remove(e.getKey(), out);
                        o.journal(nowMs, SYSTEM, null, e.getKey(), e.getValue().offset(), -1, SOURCE_EXPIRE, out);
                    }
                }
            }
            // An empty group without offsets is deleted, its journal with it (Kafka does the same).
            if (o == null || o.isEmpty()) {
                removeGroup(groupId, out);
            }
        }
    }

    private long emptySinceMs(String groupId) {
        ClassicGroup c = classic.get(groupId);
        ConsumerGroup g = consumer.get(groupId);
        long since = -1;
        if (c != null) {
            since = Math.max(since, c.emptySinceMs());
        }
        if (g != null) {
            since = Math.max(since, g.emptySinceMs());
        }
        return since;
    }

    /** Recomputes the targets of groups whose subscribed topics' partition counts changed. */
    void onMetadataChange(long nowMs, List<CoordinatorRecord> out) {
        for (ConsumerGroup g : consumer.values()) {
            g.onMetadataChange(nowMs);
            if (g.targetStale()) {
                g.computeTarget(nowMs, out);
            }
            nextMemberDeadlineMs = Math.min(nextMemberDeadlineMs, g.nextDeadlineMs());
        }
    }

    // ---- load

    void replay(byte[] key, byte[] value) {
        Decoded d = GroupRecords.decode(key, value);
        String id = d.group();
        switch (d) {
            case OffsetRecord r -> {
                GroupOffsets o =
                        offsets.computeIfAbsent(id, k -> new GroupOffsets(k, config.offsetHistorySlots(), txn));
                o.loadOffset(new TopicPartition(r.topic(), r.partition()), r.value());
                dropIfBare(id);
            }
            case JournalRecord r -> {
                GroupOffsets o =
                        offsets.computeIfAbsent(id, k -> new GroupOffsets(k, config.offsetHistorySlots(), txn));
                o.loadJournal(r.slot(), r.value());
                dropIfBare(id);
            }
            case ClassicGroupRecord r -> {
                if (r.value() == null) {
                    classic.remove(id);
                } else {
                    classic.computeIfAbsent(id, k -> new ClassicGroup(k, rebalanced))
                            .load(r.value(), 0);
                }
            }
            case ConsumerGroupRecord r -> {
                if (r.value() == null) {
                    consumer.remove(id);
                } else {
                    consumerFor(id).loadGroup(r.value());
                }
            }
            case MemberRecord r -> {
                if (r.value() != null || consumer.containsKey(id)) {
                    consumerFor(id).loadMember(r.memberId(), r.value());
                }
            }
            case TargetMemberRecord r -> {
                if (r.value() != null || consumer.containsKey(id)) {
                    consumerFor(id).loadTarget(r.memberId(), r.value());
                }
            }
            case TargetEpochRecord r -> {
                if (r.value() != null || consumer.containsKey(id)) {
                    consumerFor(id).loadTargetEpoch(r.value());
                }
            }
        }
    }

    private ConsumerGroup consumerFor(String id) {
        return consumer.computeIfAbsent(id, k -> new ConsumerGroup(k, config, counts, rebalanced));
    }

    private void dropIfBare(String id) {
        GroupOffsets o = offsets.get(id);
        if (o != null && o.isEmpty() && !o.hasJournal()) {
            offsets.remove(id);
        }
    }

    void onLoaded(long nowMs) {
        long next = Long.MAX_VALUE;
        for (ClassicGroup c : classic.values()) {
            c.restartSessions(nowMs);
            next = Math.min(next, c.nextDeadlineMs());
        }
        for (ConsumerGroup g : consumer.values()) {
            g.onLoaded(nowMs);
            next = Math.min(next, g.nextDeadlineMs());
        }
        nextMemberDeadlineMs = next;
        nextRetentionCheckMs = nowMs + config.offsetsRetentionCheckIntervalMs();
    }

    /** Every stored record of the whole state, in a canonical order (replay and snapshot checks). */
    List<CoordinatorRecord> stateRecords() {
        List<CoordinatorRecord> out = new ArrayList<>();
        for (String id : new TreeSet<>(classic.keySet())) {
            out.add(GroupRecords.classicGroup(id, classic.get(id).toValue()));
        }
        for (String id : new TreeSet<>(consumer.keySet())) {
            consumer.get(id).stateRecords(out);
        }
        for (String id : new TreeSet<>(offsets.keySet())) {
            offsets.get(id).stateRecords(out);
        }
        return out;
    }
}
