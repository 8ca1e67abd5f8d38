package io.stellflow.tools;

import io.stellflow.client.PartitionInfo;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import java.io.PrintWriter;
import java.util.List;

/**
 * {@code stellflow-topics.sh --describe}: per topic a line with its partition count and replication
 * factor, then per partition its leader, leader epoch, replicas, ISR and log start / end offsets (the
 * end is the high watermark, what a consumer can read; {@code -} for a partition without a leader,
 * which is not asked). With a filter ({@code --under-replicated-partitions}: ISR smaller than the
 * replicas; {@code --unavailable-partitions}: no leader) only the matching partition lines are printed,
 * without the topic lines, as Kafka's tool does.
 *
 * <p>Thread-safety: confined to the command's thread.
 */
final class TopicDescriber {
    /** Which partitions to print. */
    enum Filter {
        ALL,
        UNDER_REPLICATED,
        UNAVAILABLE
    }

    private TopicDescriber() {}

    /** Describes {@code topic} (null: every topic); 1 when a named topic is unknown, else 0. */
    static int describe(StellflowAdmin admin, String topic, Filter filter, PrintWriter out) {
        int rc = 0;
        for (TopicDescription d :
                admin.describeTopics(topic == null ? List.of() : List.of(topic)).values()) {
            if (d.errorCode() != Errors.NONE) {
                out.println("Topic: " + d.name() + "\tError: " + Errors.name(d.errorCode()));
                rc = 1;
                continue;
            }
            if (filter == Filter.ALL) {
                int rf = d.partitions().isEmpty()
                        ? 0
                        : d.partitions().get(0).replicas().size();
                out.println("Topic: " + d.name() + "\tPartitionCount: "
                        + d.partitions().size() + "\tReplicationFactor: " + rf);
            }
            for (PartitionInfo p : d.partitions()) {
                boolean unavailable = p.leaderId() < 0;
                boolean under = p.isr().size() < p.replicas().size();
                if (filter == Filter.UNAVAILABLE && !unavailable || filter == Filter.UNDER_REPLICATED && !under) {
                    continue;
                }
                TopicPartition tp = new TopicPartition(d.name(), p.partition());
                out.println("\tTopic: " + d.name() + "\tPartition: " + p.partition() + "\tLeader: " + p.leaderId()
                        + "\tLeaderEpoch: " + p.leaderEpoch() + "\tReplicas: " + join(p.replicas()) + "\tIsr: "
                        + join(p.isr()) + "\tLogStartOffset: " + offset(admin, tp, unavailable, StellflowAdmin.EARLIEST)
                        + "\tLogEndOffset: " + offset(admin, tp, unavailable, StellflowAdmin.LATEST));
            }
        }
        out.flush();
        return rc;
    }

    /** The offset, or {@code -} when the partition has no leader or the leader could not answer. */
    private static String offset(StellflowAdmin admin, TopicPartition tp, boolean unavailable, long spec) {
        if (unavailable) {
            return "-";
        }
        try {
            return Long.toString(admin.listOffsets(tp, spec));
        } catch (StellflowException e) {
            return "-";
        }
    }

    private static String join(List<Integer> ids) {
        StringBuilder sb = new StringBuilder();
        for (Integer id : ids) {
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            sb.append(id);
        }
        return sb.toString();
    }
}
