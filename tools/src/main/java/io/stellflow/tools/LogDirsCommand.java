package io.stellflow.tools;

import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicDescription;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeLogDirsResponse;
import io.stellflow.protocol.message.DescribeLogDirsResponse.LogDir;
import io.stellflow.protocol.message.DescribeLogDirsResponse.PartitionSize;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-log-dirs.sh --describe}: asks every broker of the cluster (DescribeLogDirs, apiKey
 * 26) for its log dirs and prints two tables: per dir its state, file-system total and usable bytes,
 * partition count and the bytes of its partitions; then per partition (sorted by broker, dir, topic,
 * partition) its segment bytes and log end offset. {@code --topic-list a,b} limits both to those
 * topics (each must exist), {@code --broker-list 1,2} to those brokers.
 *
 * <p>Exit status 0, 1 when a named topic or broker does not exist or a broker does not answer (one
 * {@code error:} line), 2 for bad arguments. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-log-dirs",
        mixinStandardHelpOptions = true,
        description = "Describe the log dirs of the brokers: size per dir and per partition.")
public final class LogDirsCommand implements Callable<Integer> {
    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            required = true,
            description = "host:port of a broker")
    String bootstrapServer;

    @Option(names = "--describe", required = true, description = "describe the log dirs (the only action)")
    boolean describe;

    @Option(names = "--topic-list", split = ",", description = "only these topics, comma-separated (default: all)")
    List<String> topics;

    @Option(names = "--broker-list", split = ",", description = "only these broker ids, comma-separated (default: all)")
    List<Integer> brokers;

    @Option(names = "--command-property", description = "extra client property k=v")
    Map<String, String> props;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (StellflowAdmin admin = new StellflowAdmin(ClientProps.of(bootstrapServer, props))) {
            if (topics != null) {
                Map<String, TopicDescription> known = admin.describeTopics(topics);
                for (String t : topics) {
                    TopicDescription d = known.get(t);
                    if (d == null || d.errorCode() != Errors.NONE) {
                        throw new IllegalArgumentException("topic " + t + " does not exist");
                    }
                }
            }
            Map<Integer, DescribeLogDirsResponse> all = admin.describeLogDirs(topics);
            if (brokers != null) {
                for (int id : brokers) {
                    if (!all.containsKey(id)) {
                        throw new IllegalArgumentException(
                                "broker " + id + " is not in the cluster (brokers: " + all.keySet() + ")");
                    }
                }
                all.keySet().retainAll(brokers);
            }
            TextTable dirs = new TextTable(
                    "BROKER", "LOG-DIR", "STATE", "TOTAL-BYTES", "USABLE-BYTES", "PARTITIONS", "SIZE-BYTES");
            TextTable parts = new TextTable("BROKER", "LOG-DIR", "TOPIC", "PARTITION", "SIZE-BYTES", "LOG-END-OFFSET");
            for (Map.Entry<Integer, DescribeLogDirsResponse> b : all.entrySet()) {
                for (LogDir d : b.getValue().logDirs()) {
                    long bytes = 0;
                    for (PartitionSize p : d.partitions()) {
                        bytes += p.sizeBytes();
                        parts.row(b.getKey(), d.logDir(), p.topic(), p.partition(), p.sizeBytes(), p.logEndOffset());
                    }
                    dirs.row(
                            b.getKey(),
                            d.logDir(),
                            d.errorCode() == Errors.NONE ? "online" : "offline (" + Errors.name(d.errorCode()) + ")",
                            d.totalBytes() < 0 ? null : d.totalBytes(),
                            d.usableBytes() < 0 ? null : d.usableBytes(),
                            d.partitions().size(),
                            bytes);
                }
            }
            dirs.print(out);
            out.println();
            parts.print(out);
            out.flush();
        }
        return 0;
    }

    public static void main(String[] args) {
        System.exit(OneLineUsageErrors.commandLine(new LogDirsCommand()).execute(args));
    }
}
