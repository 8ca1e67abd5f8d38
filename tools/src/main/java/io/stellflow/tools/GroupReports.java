package io.stellflow.tools;

import io.stellflow.client.AdminGroups;
import io.stellflow.client.GroupLag;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.TopicPartitions;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The tables {@code stellflow-consumer-groups.sh} prints: the group list, {@code --describe}'s
 * offsets (the default, {@code --offsets}), {@code --members}, {@code --state} and {@code --history},
 * and the reset plan. Column names are Kafka's where Kafka has the column. A value that is not known
 * prints as "-". Not thread-safe (one command's thread).
 */
final class GroupReports {
    private GroupReports() {}

    static void list(List<ListGroupsResponse.ListedGroup> groups, boolean withState, PrintWriter out) {
        if (!withState) {
            groups.forEach(g -> out.println(g.groupId()));
            return;
        }
        TextTable t = new TextTable("GROUP", "PROTOCOL", "STATE");
        groups.forEach(g -> t.row(g.groupId(), g.protocolType(), g.state()));
        t.print(out);
    }

    /**
     * Kafka's offsets view of {@code lag} ({@link GroupLag}): one row per partition the group has an
     * offset for or a member owns, with the committed offset, the log end, the lag and the owner;
     * members that own nothing get a row of their own.
     */
    static void offsets(GroupLag lag, PrintWriter out) {
        String groupId = lag.groupId();
        TextTable t = new TextTable(
                "GROUP",
                "TOPIC",
                "PARTITION",
                "CURRENT-OFFSET",
                "LOG-END-OFFSET",
                "LAG",
                "CONSUMER-ID",
                "HOST",
                "CLIENT-ID");
        for (GroupLag.PartitionLag p : lag.partitions()) {
            DescribedMember m = p.owner();
            t.row(
                    groupId,
                    p.partition().topic(),
                    p.partition().partition(),
                    known(p.committedOffset()),
                    known(p.logEndOffset()),
                    known(p.lag()),
                    m == null ? null : m.memberId(),
                    m == null ? null : m.clientHost(),
                    m == null ? null : m.clientId());
        }
        for (DescribedMember m : lag.idleMembers()) {
            t.row(groupId, null, null, null, null, null, m.memberId(), m.clientHost(), m.clientId());
        }
        t.print(out);
    }

    /** The value, or null ("-") when it is {@link GroupLag#UNKNOWN}. */
    private static Long known(long value) {
        return value == GroupLag.UNKNOWN ? null : value;
    }

    static void members(DescribedGroup g, PrintWriter out) {
        TextTable t = new TextTable(
                "GROUP",
                "CONSUMER-ID",
                "INSTANCE-ID",
                "HOST",
                "CLIENT-ID",
                "MEMBER-EPOCH",
                "#PARTITIONS",
                "ASSIGNMENT",
                "PENDING-REVOCATION");
        for (DescribedMember m : g.members()) {
            t.row(
                    g.groupId(),
                    m.memberId(),
                    m.instanceId(),
                    m.clientHost(),
                    m.clientId(),
                    m.memberEpoch(),
                    partitions(m.assignment()).size(),
                    text(m.assignment()),
                    text(m.pendingRevocation()));
        }
        t.print(out);
    }

    static void state(DescribedGroup g, PrintWriter out) {
        new TextTable("GROUP", "PROTOCOL", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "ASSIGNOR", "#MEMBERS")
                .row(
                        g.groupId(),
                        g.protocolType().isEmpty() ? null : g.protocolType(),
                        g.state(),
                        g.groupEpoch() < 0 ? null : g.groupEpoch(),
                        g.assignmentEpoch() < 0 ? null : g.assignmentEpoch(),
                        g.assignor(),
                        g.members().size())
                .print(out);
    }

    /** The journal, oldest first; times in UTC (ISO-8601), offsets -1 as "-". */
    static void history(String groupId, List<OffsetHistoryResponse.OffsetHistoryEntry> entries, PrintWriter out) {
        TextTable t = new TextTable(
                "GROUP",
                "TIME",
                "TOPIC",
                "PARTITION",
                "OLD-OFFSET",
                "NEW-OFFSET",
                "SOURCE",
                "PRINCIPAL",
                "CLIENT-ID",
                "MEMBER-ID");
        for (OffsetHistoryResponse.OffsetHistoryEntry e : entries) {
            t.row(
                    groupId,
                    Instant.ofEpochMilli(e.timestampMs()),
                    e.topic(),
                    e.partition(),
                    e.oldOffset() < 0 ? null : e.oldOffset(),
                    e.newOffset() < 0 ? null : e.newOffset(),
                    e.source(),
                    e.principal(),
                    e.clientId(),
                    e.memberId());
        }
        t.print(out);
    }

    /**
     * The reset plan: Kafka's columns plus the current offset (to undo it) and a note when an offset
     * was moved (clamped into the log, or the log end for a time after the last record); below the
     * table one line "NOTE: topic-partition: why" per moved partition, so a clamp is never silent.
     */
    static void plan(String groupId, List<OffsetResetPlanner.PlannedReset> plan, PrintWriter out) {
        boolean notes = plan.stream().anyMatch(p -> !p.note().isEmpty());
        TextTable t = notes
                ? new TextTable("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET", "NOTE")
                : new TextTable("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET");
        for (OffsetResetPlanner.PlannedReset p : plan) {
            Long current = p.currentOffset() < 0 ? null : p.currentOffset();
            if (notes) {
                t.row(
                        groupId,
                        p.partition().topic(),
                        p.partition().partition(),
                        current,
                        p.newOffset(),
                        p.note().isEmpty() ? null : p.note());
            } else {
                t.row(groupId, p.partition().topic(), p.partition().partition(), current, p.newOffset());
            }
        }
        t.print(out);
        for (OffsetResetPlanner.PlannedReset p : plan) {
            if (!p.note().isEmpty()) {
                out.println("NOTE: " + p.partition() + ": " + p.note());
            }
        }
    }

    static List<TopicPartition> partitions(List<TopicPartitions> list) {
        List<TopicPartition> out = new ArrayList<>();
        for (TopicPartitions t : list) {
            for (int p : t.partitions()) {
                out.add(new TopicPartition(t.topic(), p));
            }
        }
        out.sort(AdminGroups.PARTITION_ORDER);
        return out;
    }

    /** "t:0,1;u:3", or "-" for nothing. */
    private static String text(List<TopicPartitions> list) {
        StringBuilder sb = new StringBuilder();
        for (TopicPartitions t : list) {
            if (!sb.isEmpty()) {
                sb.append(';');
            }
            sb.append(t.topic()).append(':');
            for (int i = 0; i < t.partitions().size(); i++) {
                sb.append(i == 0 ? "" : ",").append(t.partitions().get(i));
            }
        }
        return sb.isEmpty() ? "-" : sb.toString();
    }

    /** True when the group has members or is in a state where members act (a reset must wait). */
    static boolean active(DescribedGroup g) {
        return !g.members().isEmpty()
                || !(DescribeGroupsResponse.STATE_EMPTY.equals(g.state())
                        || DescribeGroupsResponse.STATE_DEAD.equals(g.state()));
    }
}
