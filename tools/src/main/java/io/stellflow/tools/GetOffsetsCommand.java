package io.stellflow.tools;

import io.stellflow.client.PartitionInfo;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-get-offsets.sh}: one ListOffsets lookup per partition, printed as {@code
 * topic:partition:offset} lines sorted by topic and partition (Kafka's {@code kafka-get-offsets}
 * output). {@code --time}: {@code earliest} (or -2, the log start offset), {@code latest} (or -1, the
 * high watermark: the end a consumer sees) or a timestamp in epoch ms (the first record at or after
 * it; a partition without such a record prints no line, as in Kafka). {@code max-timestamp} (Kafka's
 * -3) is refused: ListOffsets v0 has no such lookup.
 *
 * <p>Which partitions: {@code --topic} (an exact name, else a Java regex over the topic names) with
 * {@code --partitions 0,2} optionally, or {@code --topic-partitions t:0-2,u,v:1} (Kafka's form), or
 * every topic when neither is given. Exit status 0, 1 when the broker refused or a named topic or
 * partition does not exist (one {@code error:} line on stderr), 2 for bad arguments. Not thread-safe
 * (one invocation).
 */
@Command(
        name = "stellflow-get-offsets",
        mixinStandardHelpOptions = true,
        description = "Print the earliest, latest or by-time offset of partitions as topic:partition:offset lines.")
public final class GetOffsetsCommand implements Callable<Integer> {
    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            required = true,
            description = "host:port of a broker")
    String bootstrapServer;

    @Option(names = "--topic", description = "topic name, or a Java regex over topic names (default: all topics)")
    String topic;

    @Option(names = "--partitions", split = ",", description = "partitions of --topic, comma-separated (default: all)")
    List<Integer> partitionIds;

    @Option(
            names = "--topic-partitions",
            split = ",",
            description = "topic[:partition|:first-last] list, comma-separated, e.g. orders:0-2,audit")
    List<String> topicPartitions;

    @Option(
            names = "--time",
            defaultValue = "latest",
            description = "earliest (-2), latest (-1, default) or a timestamp in epoch ms")
    String time;

    @Option(names = "--command-property", description = "extra client property k=v")
    Map<String, String> props;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** One {@code --topic-partitions} entry: a topic and an inclusive partition range (-1..-1 = all). */
    record Selector(String topic, int first, int last) {
        boolean all() {
            return first < 0;
        }
    }

    @Override
    public Integer call() {
        long spec = parseTime(time);
        List<Selector> selectors = selectors();
        List<TopicPartition> targets = new ArrayList<>();
        try (StellflowAdmin admin = new StellflowAdmin(ClientProps.of(bootstrapServer, props))) {
            Map<String, TopicDescription> all = admin.describeTopics(List.of());
            for (Selector s : selectors) {
                resolve(s, all, targets);
            }
            PrintWriter out = this.spec.commandLine().getOut();
            TreeSet<TopicPartition> sorted = new TreeSet<>(
                    Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
            sorted.addAll(targets);
            for (TopicPartition tp : sorted) {
                try {
                    out.println(tp.topic() + ":" + tp.partition() + ":" + admin.listOffsets(tp, spec));
                } catch (StellflowException e) {
                    if (e.errorCode() != Errors.OFFSET_OUT_OF_RANGE || spec < 0) {
                        throw e;
                    }
                    // No record at or after the timestamp: no line, as Kafka's tool.
                }
            }
            out.flush();
        }
        return 0;
    }

    /** Adds the partitions {@code s} names to {@code targets}; a missing topic or partition is an error. */
    private void resolve(Selector s, Map<String, TopicDescription> all, List<TopicPartition> targets) {
        List<TopicDescription> topics = new ArrayList<>();
        if (s.topic() == null) {
            topics.addAll(all.values());
        } else if (all.containsKey(s.topic())) {
            topics.add(all.get(s.topic()));
        } else {
            Pattern p;
            try {
                p = Pattern.compile(s.topic());
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("topic " + s.topic() + " does not exist");
            }
            all.values().stream().filter(d -> p.matcher(d.name()).matches()).forEach(topics::add);
            if (topics.isEmpty()) {
                throw new IllegalArgumentException("topic " + s.topic() + " does not exist (no topic name matches it)");
            }
        }
        for (TopicDescription d : topics) {
            if (d.errorCode() != Errors.NONE) {
                throw new IllegalArgumentException("topic " + d.name() + ": " + Errors.name(d.errorCode()));
            }
            int count = d.partitions().size();
            if (s.all()) {
                for (PartitionInfo p : d.partitions()) {
                    targets.add(new TopicPartition(d.name(), p.partition()));
                }
                continue;
            }
            if (s.last() >= count) {
                throw new IllegalArgumentException(
                        "topic " + d.name() + " has " + count + " partition(s), no partition " + s.last());
            }
            for (int i = s.first(); i <= s.last(); i++) {
                targets.add(new TopicPartition(d.name(), i));
            }
        }
    }

    private List<Selector> selectors() {
        if (topicPartitions != null && (topic != null || partitionIds != null)) {
            throw usage("give --topic-partitions or --topic (with --partitions), not both");
        }
        List<Selector> out = new ArrayList<>();
        if (topicPartitions != null) {
            for (String entry : topicPartitions) {
                out.add(parseSelector(entry));
            }
        } else if (partitionIds != null) {
            if (topic == null) {
                throw usage("--partitions needs --topic");
            }
            for (int p : partitionIds) {
                if (p < 0) {
                    throw usage("--partitions: partition must be >= 0, got " + p);
                }
                out.add(new Selector(topic, p, p));
            }
        } else {
            out.add(new Selector(topic, -1, -1));
        }
        return out;
    }

    private Selector parseSelector(String entry) {
        int colon = entry.lastIndexOf(':');
        if (colon < 0) {
            return new Selector(entry, -1, -1);
        }
        String name = entry.substring(0, colon);
        String range = entry.substring(colon + 1);
        try {
            int dash = range.indexOf('-');
            int first = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
            int last = dash < 0 ? first : Integer.parseInt(range.substring(dash + 1));
            if (name.isEmpty() || first < 0 || last < first) {
                throw usage("--topic-partitions: bad entry '" + entry + "' (want topic, topic:N or topic:N-M)");
            }
            return new Selector(name, first, last);
        } catch (NumberFormatException e) {
            throw usage("--topic-partitions: bad entry '" + entry + "' (want topic, topic:N or topic:N-M)");
        }
    }

    /** The ListOffsets timestamp for {@code --time}: -2, -1 or an epoch-ms timestamp >= 0. */
    private long parseTime(String value) {
        switch (value) {
            case "earliest":
                return StellflowAdmin.EARLIEST;
            case "latest":
                return StellflowAdmin.LATEST;
            case "max-timestamp", "-3":
                throw usage("--time max-timestamp is not supported: ListOffsets v0 has no max-timestamp lookup");
            default:
                break;
        }
        try {
            long ms = Long.parseLong(value);
            if (ms < -2) {
                throw usage("--time must be earliest, latest, -2, -1 or a timestamp >= 0, got " + value);
            }
            return ms;
        } catch (NumberFormatException e) {
            throw usage("--time must be earliest, latest, -2, -1 or a timestamp in epoch ms, got '" + value + "'");
        }
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    public static void main(String[] args) {
        System.exit(OneLineUsageErrors.commandLine(new GetOffsetsCommand()).execute(args));
    }
}
