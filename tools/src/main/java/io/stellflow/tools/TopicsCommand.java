package io.stellflow.tools;

import io.stellflow.client.PartitionInfo;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicDescription;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.TopicResult;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
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

    @Option(
            names = "--if-not-exists",
            description = "with --create: when the topic exists already, do nothing and exit 0 (without it,"
                    + " creating an existing topic is an error, TOPIC_ALREADY_EXISTS)")
    boolean ifNotExists;

    @Option(
            names = "--if-exists",
            description =
                    "with --alter, --delete or --describe: when --topic does not exist, do nothing and" + " exit 0")
    boolean ifExists;

    int partitions;
    int replicationFactor;

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
        if (ifNotExists && !action.create) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--if-not-exists goes with --create only");
        }
        if (ifExists && !(action.alter || action.delete || action.describe)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--if-exists goes with --alter, --delete or --describe only");
        }
        if (ifExists && topic == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--if-exists needs --topic");
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
            if (ifExists && !admin.listTopics().contains(topic)) {
                return 0; // --if-exists: nothing to alter, delete or describe
            }
            if (action.create) {
                // CreateTopic on the wire answers success for an existing topic of the same partition
                // count (docs/spec/wire-protocol.md, CreateTopic: clients rely on it), so the tool looks
                // first. A list, not a describe: Metadata for one topic auto-creates it where
                // auto.create.topics.enable is on.
                if (admin.listTopics().contains(topic)) {
                    return alreadyExists();
                }
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

    /** An existing topic given to --create: exit 0 with --if-not-exists, else a TOPIC_ALREADY_EXISTS error. */
    private int alreadyExists() {
        if (ifNotExists) {
            return 0;
        }
        PrintWriter err = spec.commandLine().getErr();
        err.println("error: topic " + topic + " already exists (TOPIC_ALREADY_EXISTS " + Errors.TOPIC_ALREADY_EXISTS
                + "); add --if-not-exists to accept an existing topic, or use --alter to grow it");
        err.flush();
        return 1;
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
            if (r.getError() == ErrorCode.NONE
                    && result != null
                    && result.getError() == ErrorCode.TOPIC_ALREADY_EXISTS
                    && result.getErrorMessage().endsWith("already exists")) {
                return alreadyExists(); // not a name collision, which stays an error below
            }
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
            if (r.getError() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && ifExists) {
                return 0;
            }
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
