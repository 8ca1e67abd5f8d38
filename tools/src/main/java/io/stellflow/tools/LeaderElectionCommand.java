package io.stellflow.tools;

import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ElectionTopicPartitions;
import io.stellflow.controller.proto.ElectionType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.PartitionElectionResult;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bin/stellflow-leader-election.sh --bootstrap-server|--bootstrap-controller host:port[,...] --election-type
 * preferred|unclean (--topic T [--partition P[,P...]] | --all-topic-partitions)}: leader elections
 * through the active controller (ElectLeaders), like Kafka's {@code kafka-leader-election.sh}.
 *
 * <ul>
 *   <li>{@code preferred}: the preferred replica (first of the assignment) becomes leader where it is
 *       live and in the ISR.
 *   <li>{@code unclean}: partitions without a leader get one, from the ISR when a member is live,
 *       else any live replica, whose ISR then is just that replica (records only the old ISR had may
 *       be lost).
 * </ul>
 * All elections of one run commit as one metadata entry; each bumps its partition's leader epoch.
 *
 * <p>Output (stdout): one line per partition, {@code <topic>-<partition>: elected leader <id> (leader
 * epoch <n>)} or {@code <topic>-<partition>: <ERROR_CODE>: <why>}, then a summary line. Exit status 0
 * when every partition was elected or needed no election ({@code ELECTION_NOT_NEEDED}); 1 when any
 * failed (for example {@code PREFERRED_LEADER_NOT_AVAILABLE}, {@code ELIGIBLE_LEADERS_NOT_AVAILABLE},
 * {@code UNKNOWN_TOPIC_OR_PARTITION}), the controller refused the request, or none answered within
 * {@code --timeout-ms} ({@code error: ...} on stderr); 2 for bad arguments.
 */
@Command(
        name = "stellflow-leader-election",
        mixinStandardHelpOptions = true,
        description = "Preferred or unclean leader election for some or all partitions.")
public final class LeaderElectionCommand implements Callable<Integer> {
    @Mixin
    ControllerOptions controller;

    @Option(
            names = "--election-type",
            required = true,
            description = "preferred (move leadership to the preferred replica) or unclean (elect for leaderless"
                    + " partitions, outside the ISR if need be)")
    String electionType;

    @Option(names = "--topic", description = "The topic (all its partitions unless --partition)")
    String topic;

    @Option(names = "--partition", split = ",", description = "Partition number(s) of --topic, comma-separated")
    List<Integer> partitions;

    @Option(names = "--all-topic-partitions", description = "Every partition of every topic")
    boolean all;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        ElectionType type = switch (electionType.strip().toLowerCase(Locale.ROOT)) {
            case "preferred" -> ElectionType.PREFERRED;
            case "unclean" -> ElectionType.UNCLEAN;
            default ->
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--election-type must be preferred or unclean, not '" + electionType + "'");
        };
        if (partitions != null && topic == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--partition needs --topic");
        }
        if (all == (topic != null)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "give either --topic (with optional --partition) or --all-topic-partitions");
        }
        if (partitions != null && partitions.stream().anyMatch(p -> p < 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--partition must be >= 0: " + partitions);
        }
        ElectLeadersRequest.Builder req = ElectLeadersRequest.newBuilder().setElectionType(type);
        if (all) {
            req.setAllTopicPartitions(true);
        } else {
            ElectionTopicPartitions.Builder tp =
                    ElectionTopicPartitions.newBuilder().setTopic(topic);
            if (partitions != null) {
                tp.addAllPartitions(partitions);
            }
            req.addTopics(tp);
        }
        return controller.run(spec, (c, out, err) -> {
            ElectLeadersResponse r = c.electLeaders(req.build());
            if (r.getError() != ErrorCode.NONE) {
                return ControllerOptions.refused(err, r.getError(), r.getErrorMessage());
            }
            int elected = 0;
            int notNeeded = 0;
            int failed = 0;
            for (PartitionElectionResult p : r.getResultsList()) {
                String name = p.getPartition() < 0 ? p.getTopic() : p.getTopic() + "-" + p.getPartition();
                if (p.getError() == ErrorCode.NONE) {
                    elected++;
                    out.printf("%s: elected leader %d (leader epoch %d)%n", name, p.getLeader(), p.getLeaderEpoch());
                } else {
                    if (p.getError() == ErrorCode.ELECTION_NOT_NEEDED) {
                        notNeeded++;
                    } else {
                        failed++;
                    }
                    out.printf("%s: %s: %s%n", name, p.getError(), p.getErrorMessage());
                }
            }
            out.printf(
                    "%s election: %d elected, %d not needed, %d failed%n",
                    type.name().toLowerCase(Locale.ROOT), elected, notNeeded, failed);
            out.flush();
            if (failed > 0) {
                err.println("error: the election failed for " + failed + " of " + r.getResultsCount() + " partitions");
                return 1;
            }
            return 0;
        });
    }

    public static void main(String[] args) {
        System.exit(
                Tools.withVersion(new CommandLine(new LeaderElectionCommand())).execute(args));
    }
}
