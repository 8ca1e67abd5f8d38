package io.stellflow.tools;

import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.TopicResult;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse;
import io.stellflow.server.common.topic.TopicConfigRules;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-topics.sh}: create (with {@code --partitions} and {@code --replication-factor}),
 * alter (grow the partition count), delete, list and describe topics (leader, leader epoch, replicas
 * and ISR per partition). Every action takes the same endpoint: brokers ({@code --bootstrap-server},
 * as in Kafka) or controllers ({@code --bootstrap-controller}), exactly one of the two
 * ({@link ClusterAccess} checks the addresses and finds the other plane through the one given).
 *
 * <p>Where each action goes: {@code --create} with topic config overrides ({@code --config k=v},
 * repeatable; keys as in {@code stellflow-configs.sh}) and {@code --alter --topic T --partitions N}
 * go to the active controller (CreateTopic on the wire carries no configs, and there is no
 * CreatePartitions on the data plane); {@code --create} without configs given brokers goes to a
 * broker (CreateTopic v2, the broker's {@code default.replication.factor} when none is given), given
 * controllers to the controller (1 replica when none is given); delete, list and describe go to a
 * broker (given controllers: an unfenced registered one). {@code --create --config} through brokers
 * needs {@code --replication-factor}: the tool cannot know the brokers' default there. As in Kafka
 * the partition count can only increase: a smaller or equal N or an unknown topic is refused by the
 * controller with nothing written.
 *
 * <p>Exit status 0 on success, 1 when an address is of the wrong kind or unreachable, or the broker
 * or controller rejected the request, 2 for bad arguments (among them a {@code --partitions} or
 * {@code --replication-factor} below 1: nothing is sent), 3 when a create was accepted by the
 * controller but not all partitions were ready when the broker or the tool stopped waiting (the topic
 * exists; {@code --describe} shows when its partitions have leaders). A create that races another
 * client's create of the same topic is {@code TOPIC_ALREADY_EXISTS}: success with {@code
 * --if-not-exists}. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-topics",
        mixinStandardHelpOptions = true,
        description = "Create, alter (grow the partition count), delete, list and describe Stellflow topics.")
public final class TopicsCommand implements Callable<Integer> {
    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            description = "host:port list of brokers (every action)")
    String bootstrapServer;

    @Option(
            names = "--bootstrap-controller",
            converter = AddressList.class,
            description = "host:port list of the controllers' control planes (controller.listener), instead of"
                    + " --bootstrap-server")
    String bootstrapController;

    @Option(names = "--config", description = "topic config override k=v for --create (repeatable)")
    Map<String, String> configs;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Action action;

    static final class Action {
        @Option(names = "--create", description = "create --topic with --partitions and --replication-factor")
        boolean create;

        @Option(names = "--alter", description = "grow --topic to --partitions in total (only increase)")
        boolean alter;

        @Option(names = "--delete", description = "delete --topic")
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
            description = "partition count for --create, at least 1 (default: the broker's num.partitions; 1 with"
                    + " --bootstrap-controller), new total for --alter")
    Integer partitionsOption;

    /** Replication factor for --create; null when not given (the broker's or controller's default). */
    @Option(
            names = "--replication-factor",
            description = "replicas per partition for --create, at least 1 (default: the broker's"
                    + " default.replication.factor, also with --config; 1 with --bootstrap-controller)")
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

    @Option(
            names = "--under-replicated-partitions",
            description = "with --describe: only partitions whose ISR is smaller than their replicas")
    boolean underReplicated;

    @Option(names = "--unavailable-partitions", description = "with --describe: only partitions without a leader")
    boolean unavailable;

    @Option(
            names = "--under-min-isr-partitions",
            description = "with --describe: only partitions whose ISR is smaller than min.insync.replicas")
    boolean underMinIsr;

    @Option(
            names = "--at-min-isr-partitions",
            description = "with --describe: only partitions whose ISR is exactly min.insync.replicas")
    boolean atMinIsr;

    @Option(names = "--command-property", description = "extra client property k=v")
    Map<String, String> props;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Exit status of a create the controller accepted whose partitions were not all ready when the
     * tool stopped waiting: neither success (0) nor refused (1).
     */
    static final int EXIT_CREATE_NOT_READY = 3;

    /** The create call through a broker; a seam for the tests of what the tool does when it fails. */
    interface Creator {
        void create(StellflowAdmin admin, String topic, int partitions, int replicationFactor);
    }

    Creator creator = StellflowAdmin::createTopic;

    private long createStartNs;

    private static final String NUM_PARTITIONS = "num.partitions";
    private static final String DEFAULT_REPLICATION_FACTOR = "default.replication.factor";

    /** How long a controller call may take, retries included. */
    static final long CONTROLLER_TIMEOUT_MS = 30_000;

    @Override
    public Integer call() {
        createStartNs = System.nanoTime();
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
        ControllerOptions.checkOneBootstrap(spec, bootstrapServer, bootstrapController);
        if (configs != null && !action.create) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--config is for --create only");
        }
        try (ClusterAccess access =
                ClusterAccess.open(bootstrapServer, bootstrapController, CONTROLLER_TIMEOUT_MS, props)) {
            if (action.create
                    && bootstrapServer != null
                    && (partitionsOption == null || (replicationFactorOption == null && configs != null))) {
                // Only what the broker cannot fill in itself: the partition count (CreateTopic always
                // carries one) and, for --config (through the controllers), the replication factor.
                // Without --config the broker applies its own default.replication.factor.
                applyBrokerDefaults(access.brokers());
            }
            if (ifExists && !action.alter && !access.brokers().listTopics().contains(topic)) {
                return 0; // --if-exists: nothing to delete or describe (--alter: the controller says)
            }
            if (action.alter) {
                return alterThroughController(access.controllers(), out);
            }
            if (action.create && (configs != null || bootstrapController != null)) {
                return createThroughController(access.controllers(), out);
            }
            return throughBroker(access, out);
        } catch (ClusterAccess.BootstrapException | ControllerUnavailableException e) {
            spec.commandLine().getErr().println("error: " + e.getMessage());
            return 1;
        }
    }

    /**
     * Without {@code --partitions} or {@code --replication-factor}, as Kafka: the brokers' {@code
     * num.partitions} and {@code default.replication.factor}, read from one broker
     * (DescribeBrokerConfigs). Needed for {@code --config}, which goes to the controllers (they have
     * no defaults of their own), and for the partition count, which CreateTopic always carries. A
     * broker that does not serve DescribeBrokerConfigs (an older one) leaves 1 partition and, without
     * {@code --config}, the broker's own default replication factor; with it, a usage error.
     */
    private void applyBrokerDefaults(StellflowAdmin admin) {
        Map<String, String> defaults = new HashMap<>();
        try {
            for (DescribeBrokerConfigsResponse.Entry e : admin.describeBrokerConfigs(
                            List.of(NUM_PARTITIONS, DEFAULT_REPLICATION_FACTOR))
                    .configs()) {
                if (e.value() != null) {
                    defaults.put(e.key(), e.value());
                }
            }
        } catch (StellflowException e) {
            if (e.errorCode() == Errors.BROKER_NOT_AVAILABLE) {
                // A broker that has just started answers before it is in the cluster's Metadata:
                // its defaults cannot be read yet, so say what is used instead of failing the create.
                spec.commandLine()
                        .getErr()
                        .println("warning: no broker listed in Metadata yet to read num.partitions and"
                                + " default.replication.factor from; using the flags' fallbacks");
            } else if (e.errorCode() != Errors.FEATURE_NOT_ENABLED && e.errorCode() != Errors.UNSUPPORTED_VERSION) {
                throw e;
            }
        }
        if (partitionsOption == null && defaults.containsKey(NUM_PARTITIONS)) {
            partitions = Integer.parseInt(defaults.get(NUM_PARTITIONS));
        }
        if (replicationFactorOption == null && defaults.containsKey(DEFAULT_REPLICATION_FACTOR)) {
            replicationFactor = Integer.parseInt(defaults.get(DEFAULT_REPLICATION_FACTOR));
        } else if (replicationFactorOption == null && configs != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--create --config goes to the controller, which has no default replication factor, and the"
                            + " broker does not report its default.replication.factor: give --replication-factor");
        }
    }

    /** Create (without configs), delete, list and describe, through a broker. */
    private int throughBroker(ClusterAccess access, PrintWriter out) {
        StellflowAdmin admin = access.brokers();
        if (action.create) {
            // CreateTopic on the wire answers success for an existing topic of the same partition
            // count (docs/spec/wire-protocol.md, CreateTopic: clients rely on it), so the tool looks
            // first. A list, not a describe: Metadata for one topic auto-creates it where
            // auto.create.topics.enable is on.
            if (admin.listTopics().contains(topic)) {
                return alreadyExists();
            }
            try {
                creator.create(admin, topic, partitions, replicationFactor);
            } catch (StellflowException e) {
                return createFailed(admin, e);
            }
            out.println("Created topic " + topic + " with " + partitions + " partition(s)"
                    + (replicationFactorOption != null ? " of " + replicationFactor + " replica(s)." : "."));
        } else if (action.delete) {
            admin.deleteTopic(topic);
            out.println("Deleted topic " + topic + ".");
        } else if (action.list) {
            admin.listTopics().forEach(out::println);
        } else {
            TopicDescriber.Filter filter = describeFilter();
            return new TopicDescriber(admin, name -> topicConfigs(access, name)).describe(topic, filter, out);
        }
        out.flush();
        return 0;
    }

    /** The partition filter of --describe; a usage error when given with another. */
    private TopicDescriber.Filter describeFilter() {
        int given = (underReplicated ? 1 : 0) + (unavailable ? 1 : 0) + (underMinIsr ? 1 : 0) + (atMinIsr ? 1 : 0);
        if (given > 1) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "give one of --under-replicated-partitions, --unavailable-partitions,"
                            + " --under-min-isr-partitions and --at-min-isr-partitions");
        }
        return underReplicated
                ? TopicDescriber.Filter.UNDER_REPLICATED
                : unavailable
                        ? TopicDescriber.Filter.UNAVAILABLE
                        : underMinIsr
                                ? TopicDescriber.Filter.UNDER_MIN_ISR
                                : atMinIsr ? TopicDescriber.Filter.AT_MIN_ISR : TopicDescriber.Filter.ALL;
    }

    /** A topic's config overrides from the active controller (DescribeConfigs). */
    private static Map<String, String> topicConfigs(ClusterAccess access, String name) {
        DescribeConfigsResponse r = access.controllers().describeConfigs(name);
        if (r.getError() != ErrorCode.NONE) {
            throw new IllegalArgumentException(
                    "the configs of topic " + name + " could not be read: " + r.getError() + " " + r.getErrorMessage());
        }
        return r.getConfigMap();
    }

    /**
     * A create through a broker that did not end in success. TOPIC_ALREADY_EXISTS: another client
     * created the topic between the tool's look and its create (with another partition count; with the
     * same count the broker answers success); that is {@link #alreadyExists}, so success under {@code
     * --if-not-exists}. A timeout or an unready answer (BROKER_NOT_AVAILABLE: the controller committed
     * the create but the broker had not opened every partition within its wait; NETWORK_ERROR; the
     * partitions without a leader yet) may still have created the topic: if the topic is listed now,
     * say so and exit {@link #EXIT_CREATE_NOT_READY} instead of calling the create refused.
     */
    private int createFailed(StellflowAdmin admin, StellflowException e) {
        if (e.errorCode() == Errors.TOPIC_ALREADY_EXISTS && !e.getMessage().contains("collides with existing topic")) {
            return alreadyExists();
        }
        boolean mayHaveCommitted = e.errorCode() == Errors.BROKER_NOT_AVAILABLE
                || e.errorCode() == StellflowException.NETWORK_ERROR
                || e.errorCode() == Errors.LEADER_NOT_AVAILABLE
                || e.getMessage().contains("created but");
        if (!mayHaveCommitted) {
            throw e;
        }
        boolean exists;
        try {
            exists = admin.listTopics().contains(topic);
        } catch (StellflowException again) {
            exists = false;
        }
        if (!exists) {
            throw e;
        }
        long waitedS = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - createStartNs);
        PrintWriter err = spec.commandLine().getErr();
        err.println("error: the create of topic " + topic + " was accepted by the controller but not all of its "
                + partitions + " partition(s) are ready after " + waitedS + " s (" + e.getMessage()
                + "); check with --describe --topic " + topic);
        err.flush();
        return EXIT_CREATE_NOT_READY;
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
    private int createThroughController(ControllerClient c, PrintWriter out) {
        int rf = replicationFactor > 0 ? replicationFactor : 1;
        CreatableTopic.Builder t = CreatableTopic.newBuilder()
                .setName(topic)
                .setNumPartitions(partitions)
                .setReplicationFactor(rf);
        if (configs != null) {
            t.putAllConfig(configs);
        }
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
        out.println("Created topic " + topic + " with " + partitions + " partition(s) of " + rf + " replica(s)"
                + (configs == null ? "." : " and config " + asStored(configs) + "."));
        out.flush();
        return 0;
    }

    /** The configs as the controller stores them ({@link TopicConfigRules#normalize}), sorted by key. */
    private static Map<String, String> asStored(Map<String, String> configs) {
        Map<String, String> stored = new TreeMap<>();
        configs.forEach((k, v) -> stored.put(k, TopicConfigRules.normalize(v)));
        return stored;
    }

    /** CreatePartitions at the active controller; it refuses a decrease, the same count or an unknown topic. */
    private int alterThroughController(ControllerClient c, PrintWriter out) {
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
        out.println("Topic " + topic + " now has " + partitions + " partition(s).");
        out.flush();
        return 0;
    }

    public static void main(String[] args) {
        System.exit(Tools.commandLine(new TopicsCommand()).execute(args));
    }
}
