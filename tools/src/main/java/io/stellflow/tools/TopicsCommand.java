package io.stellflow.tools;

import io.stellflow.client.StellflowAdmin;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.TopicResult;
import io.stellflow.protocol.message.CreateTopicRequest;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-topics.sh}: create (with {@code --partitions} and {@code --replication-factor}),
 * delete, list and describe topics (leader, leader epoch, replicas and ISR per partition) through any
 * broker ({@code --bootstrap-server}). {@code --create} with topic config overrides ({@code --config
 * k=v}, repeatable; keys as in {@code stellflow-configs.sh}) goes to the active controller instead
 * ({@code --bootstrap-controller}): CreateTopic on the wire carries no configs. {@code --alter --topic T
 * --partitions N} grows a topic to N partitions in total at the active controller
 * ({@code --bootstrap-controller}); as in Kafka the count can only increase: a smaller or equal N or an
 * unknown topic is refused by the controller with nothing written. Exit status 0 on
 * success, 1 when the broker or controller rejected the request, 2 for bad arguments (among them a
 * {@code --partitions} or {@code --replication-factor} below 1: nothing is sent). Not thread-safe
 * (one invocation).
 */
@Command(
        name = "stellflow-topics",
        mixinStandardHelpOptions = true,
        description = "Create, alter (grow the partition count), delete, list and describe Stellflow topics.")
public final class TopicsCommand implements Callable<Integer> {
    @Option(names = "--bootstrap-server", description = "host:port of a broker")
    String bootstrapServer;

    @Option(
            names = "--bootstrap-controller",
            description = "control-plane host:port list of the controllers, for --create with --config")
    String bootstrapController;

    @Option(
            names = "--config",
            description = "topic config override k=v for --create (repeatable; needs --bootstrap-controller)")
    Map<String, String> configs;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Action action;

    static final class Action {
        @Option(names = "--create", description = "create --topic with --partitions and --replication-factor")
        boolean create;

        @Option(
                names = "--alter",
                description = "grow --topic to --partitions in total (only increase; needs --bootstrap-controller)")
        boolean alter;

        @Option(names = "--delete", description = "delete --topic (brokers of a cluster only)")
        boolean delete;

        @Option(names = "--list", description = "list topic names")
        boolean list;

        @Option(names = "--describe", description = "describe --topic, or all topics")
        boolean describe;
    }

    @Option(names = "--topic", description = "topic name")
    String topic;

    /** Partition count for --create or new total for --alter; null when not given (1). */
    @Option(
            names = "--partitions",
            description = "partition count for --create, at least 1 (default 1), new total for --alter")
    Integer partitionsOption;

    /** Replication factor for --create; null when not given (the broker's or controller's default). */
    @Option(
            names = "--replication-factor",
            description = "replicas per partition for --create, at least 1 (default: the broker's"
                    + " default.replication.factor; 1 with --bootstrap-controller)")
    Integer replicationFactorOption;

    int partitions;
    int replicationFactor;

    @Option(
            names = "--under-replicated-partitions",
            description = "with --describe: only partitions whose ISR is smaller than their replicas")
    boolean underReplicated;

    @Option(names = "--unavailable-partitions", description = "with --describe: only partitions without a leader")
    boolean unavailable;

    @Option(
            names = "--under-min-isr-partitions",
            description = "not supported yet: Metadata does not carry min.insync.replicas")
    boolean underMinIsr;

    @Option(names = "--command-property", description = "extra client property k=v")
    Map<String, String> props;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if ((action.create || action.delete || action.alter) && topic == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    (action.create ? "--create" : action.delete ? "--delete" : "--alter") + " needs --topic");
        }
        if (action.alter && !spec.commandLine().getParseResult().hasMatchedOption("--partitions")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--alter needs --partitions");
        }
        if (partitionsOption != null && partitionsOption < 1) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--partitions must be at least 1, got " + partitionsOption);
        }
        if (replicationFactorOption != null && replicationFactorOption < 1) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--replication-factor must be at least 1, got " + replicationFactorOption);
        }
        partitions = partitionsOption == null ? 1 : partitionsOption;
        replicationFactor = replicationFactorOption == null
                ? CreateTopicRequest.DEFAULT_REPLICATION_FACTOR
                : replicationFactorOption;
        if ((bootstrapServer == null) == (bootstrapController == null)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "give exactly one of --bootstrap-server and --bootstrap-controller");
        }
        if (configs != null && bootstrapController == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--config needs --bootstrap-controller (CreateTopic through a broker carries no configs)");
        }
        if (action.alter && bootstrapController == null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--alter needs --bootstrap-controller (CreatePartitions goes to the controller)");
        }
        if (bootstrapController != null) {
            if (action.alter) {
                return alterThroughController(out);
            }
            if (!action.create) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "--bootstrap-controller supports --create and --alter only; use --bootstrap-server");
            }
            return createThroughController(out);
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
                return TopicDescriber.describe(admin, topic, describeFilter(), out);
            }
        }
        out.flush();
        return 0;
    }

    /** The partition filter of --describe; a usage error when given without it or with another. */
    private TopicDescriber.Filter describeFilter() {
        if (underMinIsr) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--under-min-isr-partitions is not supported yet: the broker's Metadata does not carry"
                            + " min.insync.replicas (use --under-replicated-partitions)");
        }
        if (underReplicated && unavailable) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "give one of --under-replicated-partitions and --unavailable-partitions");
        }
        return underReplicated
                ? TopicDescriber.Filter.UNDER_REPLICATED
                : unavailable ? TopicDescriber.Filter.UNAVAILABLE : TopicDescriber.Filter.ALL;
    }

    /** CreateTopics with configs at the active controller; the controller validates every key and value. */
    private int createThroughController(PrintWriter out) {
        int rf = replicationFactor > 0 ? replicationFactor : 1;
        CreatableTopic.Builder t = CreatableTopic.newBuilder()
                .setName(topic)
                .setNumPartitions(partitions)
                .setReplicationFactor(rf);
        if (configs != null) {
            t.putAllConfig(configs);
        }
        try (ControllerClient c = ControllerClient.builder(bootstrapController)
                .requestTimeout(Duration.ofSeconds(30))
                .build()) {
            CreateTopicsResponse r =
                    c.createTopics(CreateTopicsRequest.newBuilder().addTopics(t).build());
            TopicResult result = r.getTopicsCount() == 0 ? null : r.getTopics(0);
            if (r.getError() != ErrorCode.NONE || result == null || result.getError() != ErrorCode.NONE) {
                String why = r.getError() != ErrorCode.NONE || result == null
                        ? r.getError() + " " + r.getErrorMessage()
                        : result.getError() + " " + result.getErrorMessage();
                spec.commandLine().getErr().println("error: CreateTopics " + topic + " refused: " + why);
                return 1;
            }
        } catch (ControllerUnavailableException e) {
            spec.commandLine().getErr().println("error: " + e.getMessage());
            return 1;
        }
        out.println("Created topic " + topic + " with " + partitions + " partition(s) of " + rf + " replica(s)"
                + (configs == null ? "." : " and config " + new TreeMap<>(configs) + "."));
        out.flush();
        return 0;
    }

    /** CreatePartitions at the active controller; it refuses a decrease, the same count or an unknown topic. */
    private int alterThroughController(PrintWriter out) {
        try (ControllerClient c = ControllerClient.builder(bootstrapController)
                .requestTimeout(Duration.ofSeconds(30))
                .build()) {
            CreatePartitionsResponse r = c.createPartitions(CreatePartitionsRequest.newBuilder()
                    .setName(topic)
                    .setTotalCount(partitions)
                    .build());
            if (r.getError() != ErrorCode.NONE) {
                spec.commandLine()
                        .getErr()
                        .println("error: CreatePartitions " + topic + " refused: " + r.getError() + " "
                                + r.getErrorMessage());
                return 1;
            }
        } catch (ControllerUnavailableException e) {
            spec.commandLine().getErr().println("error: " + e.getMessage());
            return 1;
        }
        out.println("Topic " + topic + " now has " + partitions + " partition(s).");
        out.flush();
        return 0;
    }

    public static void main(String[] args) {
        System.exit(Tools.commandLine(new TopicsCommand()).execute(args));
    }
}
