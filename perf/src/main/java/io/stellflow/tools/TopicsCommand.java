package io.stellflow.tools;

import io.stellflow.client.PartitionInfo;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicDescription;
import io.stellflow.protocol.Errors;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-topics.sh}: create (with {@code --partitions} and {@code --replication-factor}),
 * delete, list and describe topics (leader, leader epoch, replicas and ISR per partition) through any
 * broker. Exit status 0 on success, 1 when the broker rejected the request, 2 for bad arguments. Not
 * thread-safe (one invocation).
 */
@Command(
        name = "stellflow-topics",
        mixinStandardHelpOptions = true,
        description = "Create, delete, list and describe Stellflow topics.")
public final class TopicsCommand implements Callable<Integer> {
    @Option(names = "--bootstrap-server", required = true, description = "host:port of a broker")
    String bootstrapServer;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Action action;

    static final class Action {
        @Option(names = "--create", description = "create --topic with --partitions and --replication-factor")
        boolean create;

        @Option(names = "--delete", description = "delete --topic (brokers of a cluster only)")
        boolean delete;

        @Option(names = "--list", description = "list topic names")
        boolean list;

        @Option(names = "--describe", description = "describe --topic, or all topics")
        boolean describe;
    }

    @Option(names = "--topic", description = "topic name")
    String topic;

    @Option(
            names = "--partitions",
            defaultValue = "1",
            description = "partition count for --create (default ${DEFAULT-VALUE})")
    int partitions;

    @Option(
            names = "--replication-factor",
            defaultValue = "-1",
            description = "replicas per partition for --create (default: the broker's default.replication.factor)")
    int replicationFactor;

    @Option(names = "--command-property", description = "extra client property k=v")
    Map<String, String> props;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if ((action.create || action.delete) && topic == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), (action.create ? "--create" : "--delete") + " needs --topic");
        }
        try (StellflowAdmin admin = new StellflowAdmin(ClientProps.of(bootstrapServer, props))) {
            if (action.create) {
                admin.createTopic(topic, partitions, replicationFactor);
                out.println("Created topic " + topic + " with " + partitions + " partition(s)"
                        + (replicationFactor > 0 ? " of " + replicationFactor + " replica(s)." : "."));
            } else if (action.delete) {
                admin.deleteTopic(topic);
                out.println("Deleted topic " + topic + ".");
            } else if (action.list) {
                admin.listTopics().forEach(out::println);
            } else {
                int rc = 0;
                for (TopicDescription d : admin.describeTopics(topic == null ? List.of() : List.of(topic))
                        .values()) {
                    if (d.errorCode() != Errors.NONE) {
                        out.println("Topic: " + d.name() + "\tError: " + Errors.name(d.errorCode()));
                        rc = 1;
                        continue;
                    }
                    out.println("Topic: " + d.name() + "\tPartitionCount: "
                            + d.partitions().size());
                    for (PartitionInfo p : d.partitions()) {
                        out.println("\tTopic: " + d.name() + "\tPartition: " + p.partition() + "\tLeader: "
                                + p.leaderId()
                                + "\tLeaderEpoch: " + p.leaderEpoch() + "\tReplicas: " + join(p.replicas()) + "\tIsr: "
                                + join(p.isr()));
                    }
                }
                out.flush();
                return rc;
            }
        }
        out.flush();
        return 0;
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

    public static void main(String[] args) {
        System.exit(Tools.commandLine(new TopicsCommand()).execute(args));
    }
}
