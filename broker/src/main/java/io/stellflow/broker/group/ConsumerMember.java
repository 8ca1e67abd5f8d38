package io.stellflow.broker.group;

import io.stellflow.broker.group.GroupRecords.MemberValue;
import java.util.List;

/**
 * One member of a {@link ConsumerGroup}. The fields of {@link MemberValue} are kept in the log; the
 * deadlines and {@code assignmentSent} are not (they restart on load).
 *
 * <p>Thread-safety: confined to the shard's thread.
 */
final class ConsumerMember {
    /** The epoch of a static member that left with -2 and whose assignment is kept for it. */
    static final int STATIC_LEFT_EPOCH = -2;

    final String memberId;
    String instanceId;
    String rackId;
    String clientId = "";
    String clientHost = "";
    String serverAssignor;
    List<String> subscribedTopics = List.of();
    int rebalanceTimeoutMs;
    int memberEpoch;
    int previousMemberEpoch;
    /** Partitions the member owns (reconciled), never overlapping another member's. */
    Assignment assigned = Assignment.EMPTY;
    /** Partitions the member must give up before anyone else gets them (still owned by it). */
    Assignment pendingRevocation = Assignment.EMPTY;

    long sessionDeadlineMs = Long.MAX_VALUE;
    long revocationDeadlineMs = Long.MAX_VALUE;
    /** Whether the member has been sent its current {@link #assigned}. */
    boolean assignmentSent;

    ConsumerMember(String memberId) {
        this.memberId = memberId;
    }

    boolean staticLeft() {
        return memberEpoch == STATIC_LEFT_EPOCH;
    }

    /** True when the member owns the partition or must still revoke it. */
    boolean holds(String topic, int partition) {
        return assigned.contains(topic, partition) || pendingRevocation.contains(topic, partition);
    }

    MemberValue toValue() {
        return new MemberValue(
                instanceId,
                rackId,
                clientId,
                clientHost,
                serverAssignor,
                subscribedTopics,
                rebalanceTimeoutMs,
                memberEpoch,
                previousMemberEpoch,
                assigned,
                pendingRevocation);
    }

    void load(MemberValue v) {
        instanceId = v.instanceId();
        rackId = v.rackId();
        clientId = v.clientId();
        clientHost = v.clientHost();
        serverAssignor = v.serverAssignor();
        subscribedTopics = v.subscribedTopics();
        rebalanceTimeoutMs = v.rebalanceTimeoutMs();
        memberEpoch = v.memberEpoch();
        previousMemberEpoch = v.previousMemberEpoch();
        assigned = v.assigned();
        pendingRevocation = v.pendingRevocation();
        assignmentSent = false;
    }
}
