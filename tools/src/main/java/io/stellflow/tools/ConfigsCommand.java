package io.stellflow.tools;

import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse;
import io.stellflow.server.common.topic.TopicConfigRules;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bin/stellflow-configs.sh --bootstrap-server|--bootstrap-controller host:port[,...] --entity-type topics
 * --entity-name <topic> (--describe | --alter [--add-config k=v,...] [--delete-config k,...])}: the
 * config overrides of a topic, through the active controller (IncrementalAlterConfigs /
 * DescribeConfigs). All changes of one {@code --alter} commit as one metadata entry or none does;
 * every broker then applies them to its logs of the topic. Keys: {@link TopicConfigRules}.
 *
 * <p>Output goes to the picocli command line's out/err writers. Exit status 0; 1 with {@code error:
 * ...} on stderr when the controller refused the change (unknown topic, unknown key, bad value) or
 * none answered within {@code --timeout-ms}; 2 for bad arguments.
 */
@Command(
        name = "stellflow-configs",
        mixinStandardHelpOptions = true,
        description = "Describes and alters topic config overrides (retention.ms, segment.bytes, cleanup.policy, ...).")
public final class ConfigsCommand implements Callable<Integer> {
    @Mixin
    ControllerOptions controller;

    @Option(
            names = "--entity-type",
            defaultValue = "topics",
            description = "topics (default) or brokers (--describe only: a broker's static config)")
    String entityType;

    @Option(
            names = {"--entity-name", "--topic"},
            description =
                    "The topic, or with --entity-type brokers the broker id (--describe without it: every" + " topic)")
    String topic;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Action action;

    static final class Action {
        @Option(names = "--describe", description = "print the topic's overrides")
        boolean describe;

        @Option(names = "--alter", description = "apply --add-config and --delete-config")
        boolean alter;
    }

    /**
     * A comma splits only where the next item is a {@code key=}, so a list value stays whole:
     * {@code cleanup.policy=compact,delete} (or Kafka's {@code cleanup.policy=[compact,delete]}).
     */
    @Option(
            names = "--add-config",
            split = ",(?=[^,=]+=)",
            splitSynopsisLabel = ",", // the help shows the comma, not the regex
            paramLabel = "key=value",
            description = "key=value[,key=value...] to set (with --alter); repeatable")
    Map<String, String> add;

    @Option(
            names = "--delete-config",
            split = ",",
            paramLabel = "key",
            description = "key[,key...] to remove (with --alter)")
    List<String> delete;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (topic == null && action.alter) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--alter needs --entity-name");
        }
        if (entityType.equals("brokers")) {
            return brokers();
        }
        if (!entityType.equals("topics")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--entity-type must be 'topics' or 'brokers', not '" + entityType + "'");
        }
        boolean changes = (add != null && !add.isEmpty()) || (delete != null && !delete.isEmpty());
        if (action.alter && !changes) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--alter needs --add-config and/or --delete-config");
        }
        if (action.describe && changes) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--add-config and --delete-config go with --alter");
        }
        if (topic == null) {
            return controller.runWithAccess(spec, this::describeAllTopics);
        }
        return controller.run(spec, (c, out, err) -> {
            Map<String, String> config;
            if (action.describe) {
                DescribeConfigsResponse r = c.describeConfigs(topic);
                if (r.getError() != ErrorCode.NONE) {
                    return ControllerOptions.refused(err, r.getError(), r.getErrorMessage());
                }
                config = r.getConfigMap();
            } else {
                IncrementalAlterConfigsRequest.Builder req =
                        IncrementalAlterConfigsRequest.newBuilder().setTopic(topic);
                if (add != null) {
                    add.forEach((k, v) -> req.addConfigs(AlterableConfig.newBuilder()
                            .setKey(k.strip())
                            .setValue(unbracket(v))
                            .setOp(ConfigOpType.SET)));
                }
                if (delete != null) {
                    delete.forEach(k -> req.addConfigs(
                            AlterableConfig.newBuilder().setKey(k.strip()).setOp(ConfigOpType.DELETE)));
                }
                // Keys to delete that are not set: said after the change (Kafka says nothing).
                List<String> unset = new ArrayList<>();
                if (delete != null) {
                    DescribeConfigsResponse before = c.describeConfigs(topic);
                    if (before.getError() == ErrorCode.NONE) {
                        delete.stream()
                                .map(String::strip)
                                .filter(k -> !before.getConfigMap().containsKey(k))
                                .forEach(unset::add);
                    }
                }
                IncrementalAlterConfigsResponse r = c.incrementalAlterConfigs(req.build());
                if (r.getError() != ErrorCode.NONE) {
                    return ControllerOptions.refused(err, r.getError(), r.getErrorMessage());
                }
                for (String k : unset) {
                    err.println("note: " + k + " is not set on topic " + topic + "; nothing to delete");
                }
                err.flush();
                out.println("Completed updating config for topic " + topic + ".");
                config = r.getConfigMap();
            }
            out.println("Configs for topic " + topic + ":");
            if (config.isEmpty()) {
                out.println("  (none: the brokers' defaults apply)");
            }
            new TreeMap<>(config).forEach((k, v) -> out.println("  " + k + "=" + v));
            out.flush();
            return 0;
        });
    }

    /** {@code --describe} without {@code --entity-name}: every topic's overrides, by name (Kafka's tool). */
    private int describeAllTopics(ClusterAccess access, PrintWriter out, PrintWriter err) {
        for (String name : new java.util.TreeSet<>(access.brokers().listTopics())) {
            DescribeConfigsResponse r = access.controllers().describeConfigs(name);
            if (r.getError() != ErrorCode.NONE) {
                return ControllerOptions.refused(err, r.getError(), r.getErrorMessage());
            }
            out.println("Configs for topic " + name + ":");
            if (r.getConfigMap().isEmpty()) {
                out.println("  (none: the brokers' defaults apply)");
            }
            new TreeMap<>(r.getConfigMap()).forEach((k, v) -> out.println("  " + k + "=" + v));
        }
        out.flush();
        return 0;
    }

    /**
     * {@code --entity-type brokers}: {@code --describe} prints the broker's effective static config
     * (DescribeBrokerConfigs) as {@code key=value} lines with their source, Kafka's {@code
     * STATIC_BROKER_CONFIG} / {@code DEFAULT_CONFIG}; {@code --alter} is refused (exit 1): the broker has
     * no dynamic configuration.
     */
    private int brokers() {
        PrintWriter err = spec.commandLine().getErr();
        if (action.alter) {
            err.println("error: dynamic broker configs are not supported: a broker reads its configuration only at"
                    + " start; change it in the broker's properties file and restart the broker");
            err.flush();
            return 1;
        }
        if ((add != null && !add.isEmpty()) || (delete != null && !delete.isEmpty())) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--add-config and --delete-config go with --alter");
        }
        Integer brokerId = null; // null: every broker in Metadata, as Kafka's tool without --entity-name
        if (topic != null) {
            try {
                brokerId = Integer.parseInt(topic.strip());
            } catch (NumberFormatException e) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "--entity-name must be a broker id with --entity-type brokers, not '" + topic + "'");
            }
        }
        ControllerOptions.checkOneBootstrap(spec, controller.bootstrapServer, controller.bootstrapController);
        PrintWriter out = spec.commandLine().getOut();
        try (ClusterAccess access = ClusterAccess.open(
                controller.bootstrapServer, controller.bootstrapController, controller.timeoutMs, null)) {
            List<Integer> ids =
                    brokerId != null ? List.of(brokerId) : access.brokers().brokerIds();
            for (int id : ids) {
                DescribeBrokerConfigsResponse r = access.brokers().describeBrokerConfigs(id, null);
                out.println("Static configs for broker " + r.brokerId() + " (dynamic broker configs: not supported):");
                for (DescribeBrokerConfigsResponse.Entry e : r.configs()) {
                    out.println("  " + e.key() + "=" + (e.value() == null ? "(sensitive, not shown)" : e.value())
                            + (e.source() == DescribeBrokerConfigsResponse.SOURCE_STATIC
                                    ? " (STATIC_BROKER_CONFIG)"
                                    : " (DEFAULT_CONFIG)"));
                }
            }
            out.flush();
            return 0;
        } catch (ControllerUnavailableException | ClusterAccess.BootstrapException e) {
            err.println("error: " + e.getMessage());
            return 1;
        }
    }

    /** {@code [a,b]} -> {@code a,b} (Kafka's list syntax); anything else as given. */
    static String unbracket(String v) {
        String t = v.strip();
        return t.length() >= 2 && t.startsWith("[") && t.endsWith("]") ? t.substring(1, t.length() - 1) : v;
    }

    public static void main(String[] args) {
        System.exit(Tools.commandLine(new ConfigsCommand()).execute(args));
    }
}
