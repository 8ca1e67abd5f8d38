package io.stellflow.tools;

import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-console-consumer.sh}: prints record values, one per line, as raw bytes followed
 * by {@code '\n'} (a null value prints as {@code null}); stdout is buffered and flushed after each
 * poll. Diagnostics go to stderr only.
 *
 * <p>Start position: {@code --offset earliest|latest|N} (needs {@code --partition}), {@code
 * --from-beginning}, or else the end of each partition. {@code --property} keys choose the printed
 * fields ({@code print.key}, {@code print.partition}, {@code print.offset}, {@code print.timestamp},
 * {@code key.separator}, ...: {@link RecordFormatter}). Order across partitions: with several partitions and {@code
 * --from-beginning}, the tool prints partition by partition (all of partition 0 up to its end at
 * start time, then partition 1, ...) and then follows all partitions together; {@code
 * --interleave} reads all partitions at once instead (records of different partitions mix).
 *
 * <p>{@code --group G}: reads as a member of consumer group G (subscribe; the group's committed
 * offsets, else {@code --from-beginning} or the end), committing what it printed, also when it
 * stops.
 *
 * <p>{@code --isolation-level read_committed} (Kafka's flag; {@code isolation.level}) prints only
 * committed and non-transactional records, up to the last stable offset.
 *
 * <p>Stops after {@code --max-messages} records, or when no record arrived for {@code
 * --timeout-ms}; otherwise runs until killed. Exit status 0, 1 on a client error, 2 for bad
 * arguments. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-console-consumer",
        mixinStandardHelpOptions = true,
        description = {
            "Print the values of a topic's records, one per line (raw bytes + '\\n').",
            "With several partitions and --from-beginning, prints partition by partition (each up to its end"
                    + " at start), then follows all partitions; --interleave reads them all at once."
        })
public final class ConsoleConsumer implements Callable<Integer> {
    /**
     * With {@code --group} and {@code --timeout-ms}: how long the tool waits for its first partitions
     * at least. The first member of a group on a new cluster waits for {@code __consumer_offsets} to be
     * created and loaded (50 partitions), which took several seconds on the 2-core development machine.
     */
    private static final long JOIN_TIMEOUT_MS = 30_000;

    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            required = true,
            description = "host:port of a broker")
    String bootstrapServer;

    @Option(names = "--topic", required = true, description = "topic to read")
    String topic;

    @Option(names = "--partition", description = "read only this partition")
    Integer partition;

    @Option(names = "--from-beginning", description = "start at the log start offset")
    boolean fromBeginning;

    @Option(names = "--offset", description = "start at earliest, latest or this offset (needs --partition)")
    String offset;

    @Option(
            names = "--property",
            description = "output format k=v: print.key, print.partition, print.offset, print.timestamp, print.value,"
                    + " print.headers, key.separator (default tab), line.separator, null.literal,"
                    + " headers.separator (default ,), headers.key.separator (default :)")
    Map<String, String> properties;

    @Option(
            names = "--formatter",
            description = "default (the --property fields; Kafka's DefaultMessageFormatter class names too) or json"
                    + " (one object per record: topic, partition, offset, timestamp, key, value, headers)")
    String formatterName;

    private RecordPrinter formatter;

    @Option(names = "--max-messages", description = "exit after this many records (-1: no limit, the default)")
    Long maxMessages;

    @Option(
            names = "--exclude-internal",
            description = "never read internal topics (names starting with __, such as __consumer_offsets)")
    boolean excludeInternal;

    @Option(names = "--timeout-ms", description = "exit when no record arrived for this long")
    Long timeoutMs;

    @Option(names = "--interleave", description = "with several partitions, read them all at once")
    boolean interleave;

    @Option(
            names = "--group",
            description = "read as a member of this consumer group: the coordinator assigns the partitions, reading"
                    + " starts at the group's committed offsets (else the end, or the start with --from-beginning),"
                    + " and the printed positions are committed")
    String group;

    @Option(
            names = "--isolation-level",
            description = "read_uncommitted (the default: every record up to the high watermark) or read_committed"
                    + " (records of committed transactions and plain records only, up to the last stable offset)")
    String isolationLevel;

    @Option(names = "--consumer-property", description = "consumer property k=v")
    Map<String, String> consumerProps = new HashMap<>();

    @Spec
    CommandLine.Model.CommandSpec spec;

    OutputStream stdout = new FileOutputStream(FileDescriptor.out);

    private long printed;

    /** Set by {@link #requestStop} (the SIGTERM / Ctrl-C hook); read by the {@code --group} loop. */
    private volatile boolean stopRequested;

    /** Counted down once the {@code --group} loop has closed its consumer (committed and left). */
    private final CountDownLatch groupLoopDone = new CountDownLatch(1);

    /** How long the shutdown hook waits for the consumer to commit and leave the group. */
    private static final long STOP_WAIT_MS = 10_000;

    @Override
    public Integer call() throws IOException {
        if (offset != null && partition == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--offset needs --partition");
        }
        long startOffset = offset == null ? -1 : parseOffset(offset);
        if (maxMessages != null && maxMessages == -1) {
            maxMessages = null; // Kafka's "no limit"
        } else if (maxMessages != null && maxMessages < 1) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--max-messages must be at least 1, or -1 for no limit, got " + maxMessages);
        }
        if (excludeInternal && topic.startsWith("__")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--topic " + topic + " is an internal topic and --exclude-internal is given");
        }
        try {
            formatter = RecordPrinter.of(formatterName, properties);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (isolationLevel != null
                && !isolationLevel.equals("read_committed")
                && !isolationLevel.equals("read_uncommitted")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--isolation-level must be read_committed or read_uncommitted, got '" + isolationLevel + "'");
        }
        Properties props = ClientProps.of(bootstrapServer, consumerProps);
        if (isolationLevel != null) {
            props.setProperty("isolation.level", isolationLevel);
        }
        props.putIfAbsent("client.id", "stellflow-console-consumer");
        if (group != null) {
            return consumeAsGroupMember(props);
        }
        List<TopicPartition> partitions = partitions(props);
        OutputStream out = new BufferedOutputStream(stdout, 1 << 16);
        try (StellflowConsumer consumer = new StellflowConsumer(props)) {
            consumer.assign(partitions);
            if (offset != null && offset.equals("earliest")) {
                consumer.seekToBeginning(partitions);
            } else if (offset != null && offset.equals("latest")) {
                consumer.seekToEnd(partitions);
            } else if (offset != null) {
                consumer.seek(partitions.get(0), startOffset);
            } else if (fromBeginning) {
                consumer.seekToBeginning(partitions);
            } else {
                consumer.seekToEnd(partitions);
            }
            // Looks up the leaders and opens the connections before any idle clock starts, so that
            // --timeout-ms counts time without data, not start-up time.
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            if (startOffset >= 0 && startOffset > ends.get(partitions.get(0))) {
                TopicPartition tp = partitions.get(0);
                spec.commandLine()
                        .getErr()
                        .println("warning: --offset " + startOffset + " is past the log end " + ends.get(tp) + " of "
                                + tp.topic() + "-" + tp.partition() + "; the consumer resets by auto.offset.reset="
                                + props.getProperty("auto.offset.reset", "latest"));
                spec.commandLine().getErr().flush();
            }
            if (fromBeginning && partitions.size() > 1 && !interleave) {
                Map<TopicPartition, Long> positions = new HashMap<>();
                for (TopicPartition tp : partitions) {
                    positions.put(tp, consumer.position(tp));
                }
                for (TopicPartition tp : partitions) {
                    consumer.assign(List.of(tp));
                    consumer.seek(tp, positions.get(tp));
                    if (!drainTo(consumer, tp, ends.get(tp), out)) {
                        return 0;
                    }
                    positions.put(tp, consumer.position(tp));
                }
                consumer.assign(partitions);
                positions.forEach(consumer::seek);
            }
            follow(consumer, out);
        } finally {
            out.flush();
        }
        return 0;
    }

    /**
     * {@code --group}: subscribe to the topic; {@code --from-beginning} only decides where a partition
     * without a committed offset starts (auto.offset.reset earliest, else latest). Auto commit runs
     * while printing; on exit each partition's position is moved back to the first record not printed
     * (the {@code --max-messages} cut), so the commit made when leaving the group covers exactly what
     * was printed. {@code --timeout-ms} counts from the first assignment (before it, at least {@link
     * #JOIN_TIMEOUT_MS}), so joining the group is not counted as time without data.
     */
    private Integer consumeAsGroupMember(Properties props) throws IOException {
        if (partition != null || offset != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--group reads the partitions the group assigns: drop --partition and --offset");
        }
        if (group.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--group must not be empty");
        }
        props.setProperty("group.id", group);
        props.putIfAbsent("auto.offset.reset", fromBeginning ? "earliest" : "latest");
        // Ctrl-C / SIGTERM: stop the loop and wait for close(), which commits what was printed and
        // leaves the group, so the partitions move to the other members now, not after the session
        // timeout.
        Thread hook = new Thread(
                () -> {
                    if (!requestStop(STOP_WAIT_MS)) {
                        System.err.println("warning: the consumer did not leave the group within " + STOP_WAIT_MS
                                + " ms; its partitions move after the session timeout");
                    }
                },
                "console-consumer-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return consumeUntilStopped(props);
        } finally {
            groupLoopDone.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook is running: it returns now that the loop is done.
            }
        }
    }

    /**
     * Asks the {@code --group} loop to stop (thread-safe; called by the shutdown hook) and waits up to
     * {@code waitMs} for it to close its consumer. True when it closed (or was not running a group).
     */
    boolean requestStop(long waitMs) {
        stopRequested = true;
        try {
            return group == null || groupLoopDone.await(waitMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private Integer consumeUntilStopped(Properties props) throws IOException {
        OutputStream out = new BufferedOutputStream(stdout, 1 << 16);
        try (StellflowConsumer consumer = new StellflowConsumer(props)) {
            // As without --group (and as the perf tool): a topic that does not exist is an error now,
            // not a silent wait for an assignment that never comes.
            partitions(props);
            consumer.subscribe(List.of(topic));
            long lastDataNs = System.nanoTime();
            boolean assigned = false;
            while (!stopRequested) {
                List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(200));
                if (!assigned && !consumer.assignment().isEmpty()) {
                    // --timeout-ms counts time without data, not the join (the coordinator may still
                    // be creating and loading __consumer_offsets on first use).
                    assigned = true;
                    lastDataNs = System.nanoTime();
                }
                if (!records.isEmpty()) {
                    lastDataNs = System.nanoTime();
                }
                int printedNow = printCount(records);
                print(records, out);
                if (printedNow < records.size()) {
                    consumer.seekBack(records.subList(printedNow, records.size()));
                    return 0;
                }
                boolean idle = assigned
                        ? idle(lastDataNs)
                        : timeoutMs != null
                                && System.nanoTime() - lastDataNs >= Math.max(timeoutMs, JOIN_TIMEOUT_MS) * 1_000_000L;
                if (maxMessages != null && printed >= maxMessages || idle) {
                    return 0;
                }
            }
            return 0;
        } finally {
            out.flush();
        }
    }

    /** How many of {@code records} {@link #print} prints before --max-messages. */
    private int printCount(List<ConsumerRecord> records) {
        return maxMessages == null
                ? records.size()
                : (int) Math.min(records.size(), Math.max(0, maxMessages - printed));
    }

    private List<TopicPartition> partitions(Properties props) {
        try (StellflowAdmin admin = StellflowAdmin.besideClient(props)) {
            TopicDescription d = admin.describeTopics(List.of(topic)).get(topic);
            if (d == null || d.errorCode() != Errors.NONE) {
                throw new StellflowException(
                        d == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : d.errorCode(), "cannot read topic " + topic);
            }
            if (partition != null) {
                // checked here, or the consumer would wait for a leader of a partition that does not exist
                if (partition < 0 || partition >= d.partitions().size()) {
                    throw new StellflowException(
                            Errors.UNKNOWN_TOPIC_OR_PARTITION,
                            "topic " + topic + " has " + d.partitions().size() + " partition(s), no partition "
                                    + partition);
                }
                return List.of(new TopicPartition(topic, partition));
            }
            List<TopicPartition> out = new ArrayList<>();
            d.partitions().forEach(p -> out.add(new TopicPartition(topic, p.partition())));
            return out;
        }
    }

    /** Reads {@code tp} up to {@code end}; false when the tool should exit (limit or idle). */
    private boolean drainTo(StellflowConsumer consumer, TopicPartition tp, long end, OutputStream out)
            throws IOException {
        long lastDataNs = System.nanoTime();
        while (consumer.position(tp) < end) {
            List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(200));
            if (!records.isEmpty()) {
                lastDataNs = System.nanoTime();
            }
            if (!print(records, out) || idle(lastDataNs)) {
                return false;
            }
        }
        return true;
    }

    private void follow(StellflowConsumer consumer, OutputStream out) throws IOException {
        long lastDataNs = System.nanoTime();
        while (true) {
            List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(200));
            if (!records.isEmpty()) {
                lastDataNs = System.nanoTime();
            }
            if (!print(records, out) || idle(lastDataNs)) {
                return;
            }
        }
    }

    private boolean idle(long lastDataNs) {
        return timeoutMs != null && System.nanoTime() - lastDataNs >= timeoutMs * 1_000_000L;
    }

    /** Writes the values; false once --max-messages is reached. */
    private boolean print(List<ConsumerRecord> records, OutputStream out) throws IOException {
        for (ConsumerRecord r : records) {
            if (maxMessages != null && printed >= maxMessages) {
                break;
            }
            formatter.write(r, out);
            printed++;
        }
        out.flush();
        return maxMessages == null || printed < maxMessages;
    }

    /** {@code --offset}: earliest and latest as -1 (resolved by seeking), else a number >= 0. */
    private long parseOffset(String value) {
        if (value.equals("earliest") || value.equals("latest")) {
            return -1;
        }
        try {
            long n = Long.parseLong(value);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new CommandLine.ParameterException(
                spec.commandLine(), "--offset must be earliest, latest or an offset >= 0, got '" + value + "'");
    }

    public static void main(String[] args) {
        System.exit(OneLineUsageErrors.commandLine(new ConsoleConsumer()).execute(args));
    }
}
