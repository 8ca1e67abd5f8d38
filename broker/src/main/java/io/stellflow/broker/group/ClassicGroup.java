package io.stellflow.broker.group;

import io.stellflow.broker.group.GroupRecords.ClassicGroupValue;
import io.stellflow.broker.group.GroupRecords.ClassicMemberValue;
import io.stellflow.protocol.Errors;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A group of the classic (v0) protocol, exactly as spec §6.9-6.11 and decision 9.m say: JoinGroup
 * completes at once (no barrier), a given member id is admitted as given, the generation is 1 after
 * the first join and grows by one on every join and every eviction, the leader is the first member
 * and, when it goes, the oldest remaining one. Heartbeat from a known member extends its session even
 * when its generation is stale (the answer is then UNKNOWN_SERVER_ERROR, 1); SyncGroup answers 0 only
 * to a known member at the current generation. A member whose session runs out is evicted. The
 * coordinator tracks membership only: assignment is client-side.
 *
 * <p>State kept in the log: the {@link ClassicGroupValue} (generation, leader, members in join order,
 * when the group became empty), rewritten whole on every join and eviction (v0 groups are small and
 * heartbeats write nothing). Session deadlines are not kept: they restart on load.
 *
 * <p>Thread-safety: confined to the shard's thread.
 */
final class ClassicGroup {
    private final String groupId;
    private int generation;
    private String leaderId;
    private long emptySinceMs;
    private final LinkedHashMap<String, Member> members = new LinkedHashMap<>();

    /** One member; {@code deadlineMs} is the runtime clock time its session ends. */
    private record Member(String memberId, String clientId, String clientHost, int sessionTimeoutMs, long deadlineMs) {}

    /** What a JoinGroup produced. */
    record JoinResult(int generation, String memberId, String leaderId) {}

    ClassicGroup(String groupId) {
        this.groupId = groupId;
        this.emptySinceMs = -1;
    }

    String groupId() {
        return groupId;
    }

    int generation() {
        return generation;
    }

    String leaderId() {
        return leaderId;
    }

    int memberCount() {
        return members.size();
    }

    boolean isEmpty() {
        return members.isEmpty();
    }

    /** When the group last became empty (ms, runtime clock), -1 while it has members or if unknown. */
    long emptySinceMs() {
        return emptySinceMs;
    }

    boolean hasMember(String memberId) {
        return members.containsKey(memberId);
    }

    /** Member ids in join order. */
    List<String> memberIds() {
        return List.copyOf(members.keySet());
    }

    /** Client id and host of a member, for describe; null when unknown. */
    String[] clientOf(String memberId) {
        Member m = members.get(memberId);
        return m == null ? null : new String[] {m.clientId(), m.clientHost()};
    }

    /**
     * Admits {@code memberId} (new or known; a known member's session timeout and client are
     * updated) and moves to the next generation.
     */
    JoinResult join(String memberId, RequestOrigin origin, int sessionTimeoutMs, long nowMs) {
        Member m = new Member(
                memberId, origin.clientId(), origin.clientHost(), sessionTimeoutMs, nowMs + sessionTimeoutMs);
        members.put(memberId, m);
        if (leaderId == null) {
            leaderId = memberId;
        }
        emptySinceMs = -1;
        generation++;
        return new JoinResult(generation, memberId, leaderId);
    }

    /**
     * Heartbeat (spec §6.9): a known member's session is extended whatever the generation; 0 only
     * at the current generation, else UNKNOWN_SERVER_ERROR (also for an unknown member).
     */
    short heartbeat(int generationId, String memberId, long nowMs) {
        Member m = members.get(memberId);
        if (m == null) {
            return Errors.UNKNOWN_SERVER_ERROR;
        }
        members.put(
                memberId,
                new Member(
                        m.memberId(),
                        m.clientId(),
                        m.clientHost(),
                        m.sessionTimeoutMs(),
                        nowMs + m.sessionTimeoutMs()));
        return generationId == generation ? Errors.NONE : Errors.UNKNOWN_SERVER_ERROR;
    }

    /** SyncGroup (spec §6.11): 0 for a known member at the current generation, else 1 as Heartbeat. */
    short sync(int generationId, String memberId) {
        return members.containsKey(memberId) && generationId == generation ? Errors.NONE : Errors.UNKNOWN_SERVER_ERROR;
    }

    /**
     * Evicts every member whose session ended at or before {@code nowMs}, one generation per
     * eviction; returns the evicted ids (empty when nothing changed).
     */
    List<String> expire(long nowMs) {
        List<String> evicted = new ArrayList<>();
        Iterator<Map.Entry<String, Member>> it = members.entrySet().iterator();
        while (it.hasNext()) {
            Member m = it.next().getValue();
            if (m.deadlineMs() <= nowMs) {
                it.remove();
                evicted.add(m.memberId());
                generation++;
            }
        }
        if (!evicted.isEmpty()) {
            if (leaderId != null && !members.containsKey(leaderId)) {
                leaderId =
                        members.isEmpty() ? null : members.keySet().iterator().next();
            }
            if (members.isEmpty()) {
                emptySinceMs = nowMs;
            }
        }
        return evicted;
    }

    /** Earliest session deadline, Long.MAX_VALUE without members. */
    long nextDeadlineMs() {
        long next = Long.MAX_VALUE;
        for (Member m : members.values()) {
            next = Math.min(next, m.deadlineMs());
        }
        return next;
    }

    /** The state as stored in the log. */
    ClassicGroupValue toValue() {
        List<ClassicMemberValue> ms = new ArrayList<>(members.size());
        for (Member m : members.values()) {
            ms.add(new ClassicMemberValue(m.memberId(), m.clientId(), m.clientHost(), m.sessionTimeoutMs()));
        }
        return new ClassicGroupValue(generation, leaderId, emptySinceMs, ms);
    }

    /** Replaces the state by a stored value; sessions restart at {@code nowMs}. */
    void load(ClassicGroupValue v, long nowMs) {
        generation = v.generation();
        leaderId = v.leaderId();
        emptySinceMs = v.emptySinceMs();
        members.clear();
        for (ClassicMemberValue m : v.members()) {
            members.put(
                    m.memberId(),
                    new Member(
                            m.memberId(),
                            m.clientId(),
                            m.clientHost(),
                            m.sessionTimeoutMs(),
                            nowMs + m.sessionTimeoutMs()));
        }
    }

    /** Restarts every session at {@code nowMs} (after a load: the log holds no deadlines). */
    void restartSessions(long nowMs) {
        members.replaceAll((id, m) -> new Member(
                m.memberId(), m.clientId(), m.clientHost(), m.sessionTimeoutMs(), nowMs + m.sessionTimeoutMs()));
    }
}
