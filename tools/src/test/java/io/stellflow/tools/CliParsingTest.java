package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class CliParsingTest {

    @Test
    void topicsCommandNeedsExactlyOneAction() {
        TopicsCommand cmd = new TopicsCommand();
        new CommandLine(cmd).parseArgs("--bootstrap-server", "h:1", "--create", "--topic", "x", "--partitions", "3");
        assertThat(cmd.action.create).isTrue();
        assertThat(cmd.topic).isEqualTo("x");
        assertThat(cmd.partitionsOption).isEqualTo(3);
        assertThat(cmd.replicationFactorOption).as("not given").isNull();

        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new TopicsCommand())
                .setErr(new PrintWriter(err))
                .execute("--bootstrap-server", "h:1", "--list", "--describe");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("mutually exclusive");
    }

    @Test
    void usageErrorsOfTopicsAndConfigsAreOneErrorLineAndOneHint() {
        String[][] topics = {
            {"--bootstrap-server", "127.0.0.1:1", "--alter", "--topic", "t"},
            {"--bootstrap-server", "127.0.0.1:1", "--create", "--topic", "t", "--partitions", "0"},
            {"--bootstrap-server", "127.0.0.1:1", "--create"},
            {"--bootstrap-server", "127.0.0.1:1", "--list", "--describe"},
        };
        String[] topicReasons = {
            "--alter needs --partitions",
            "--partitions must be at least 1, got 0",
            "--create needs --topic",
            "--list, --describe are mutually exclusive (specify only one)",
        };
        for (int i = 0; i < topics.length; i++) {
            assertUsageError(new TopicsCommand(), topicReasons[i], topics[i]);
        }
        assertUsageError(
                new ConfigsCommand(),
                "--alter needs --add-config and/or --delete-config",
                "--bootstrap-server",
                "127.0.0.1:1",
                "--entity-name",
                "t",
                "--alter");
        assertUsageError(
                new ConfigsCommand(),
                "Missing required argument (specify one of these): (--describe | --alter)",
                "--bootstrap-server",
                "127.0.0.1:1",
                "--entity-name",
                "t");
    }

    /** Exit 2, nothing on stdout, and exactly {@code error: <reason>} plus the hint on stderr. */
    private static void assertUsageError(Object command, String reason, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(command)
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
        assertThat(rc).as(String.join(" ", args)).isEqualTo(2);
        assertThat(err.toString())
                .as(String.join(" ", args))
                .isEqualTo("error: " + reason + "\nRun with --help for usage.\n");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void consoleProducerMapsShortcutsAndPropertiesToProducerConfig() {
        ConsoleProducer cmd = new ConsoleProducer();
        new CommandLine(cmd)
                .parseArgs(
                        "--bootstrap-server",
                        "h:1",
                        "--topic",
                        "t",
                        "--acks",
                        "all",
                        "--batch-size",
                        "100",
                        "--linger-ms",
                        "3",
                        "--producer-property",
                        "max.in.flight.requests.per.connection=2",
                        "--property",
                        "parse.key=true",
                        "--property",
                        "key.separator=::");
        Properties p = cmd.producerProperties();
        assertThat(p.getProperty("acks")).isEqualTo("all");
        assertThat(p.getProperty("batch.size")).isEqualTo("100");
        assertThat(p.getProperty("linger.ms")).isEqualTo("3");
        assertThat(p.getProperty("max.in.flight.requests.per.connection")).isEqualTo("2");
        assertThat(p.getProperty("bootstrap.servers")).isEqualTo("h:1");
        assertThat(cmd.separator()).isEqualTo("::".getBytes(StandardCharsets.UTF_8));

        ConsoleProducer plain = new ConsoleProducer();
        new CommandLine(plain).parseArgs("--bootstrap-server", "h:1", "--topic", "t");
        assertThat(plain.separator()).isNull();
        ConsoleProducer dflt = new ConsoleProducer();
        new CommandLine(dflt).parseArgs("--bootstrap-server", "h:1", "--topic", "t", "--property", "parse.key=true");
        assertThat(dflt.separator()).isEqualTo(new byte[] {'\t'});
    }

    @Test
    void lineSplitterKeepsEveryByteExceptTheNewlines() throws IOException {
        byte[] input = "a\r\n\nü€ line\n\u0000\u00ff last".getBytes(StandardCharsets.UTF_8);
        ConsoleProducer.LineSplitter s = new ConsoleProducer.LineSplitter(new ByteArrayInputStream(input));
        List<String> lines = new ArrayList<>();
        byte[] line;
        while ((line = s.next()) != null) {
            lines.add(new String(line, StandardCharsets.UTF_8));
        }
        assertThat(lines).containsExactly("a\r", "", "ü€ line", "\u0000\u00ff last");
    }

    @Test
    void lineSplitterHandlesLinesLongerThanItsBuffer() throws IOException {
        byte[] big = new byte[200_000];
        java.util.Arrays.fill(big, (byte) 'x');
        byte[] input = new byte[big.length * 2 + 2];
        System.arraycopy(big, 0, input, 0, big.length);
        input[big.length] = '\n';
        System.arraycopy(big, 0, input, big.length + 1, big.length);
        input[input.length - 1] = '\n';
        ConsoleProducer.LineSplitter s = new ConsoleProducer.LineSplitter(new ByteArrayInputStream(input));
        assertThat(s.next()).isEqualTo(big);
        assertThat(s.next()).isEqualTo(big);
        assertThat(s.next()).isNull();
    }

    @Test
    void consoleConsumerRejectsOffsetWithoutPartition() {
        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new ConsoleConsumer())
                .setErr(new PrintWriter(err))
                .execute("--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--offset", "5");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--offset needs --partition");
    }

    @Test
    void consoleConsumerWithAGroupRefusesAPartitionOrAnOffset() {
        for (String[] extra : new String[][] {{"--partition", "0"}, {"--partition", "0", "--offset", "5"}}) {
            StringWriter err = new StringWriter();
            String[] args = new String[] {"--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--group", "g"};
            String[] all = java.util.Arrays.copyOf(args, args.length + extra.length);
            System.arraycopy(extra, 0, all, args.length, extra.length);
            int rc = Tools.commandLine(new ConsoleConsumer())
                    .setErr(new PrintWriter(err))
                    .execute(all);
            assertThat(rc).isEqualTo(2);
            assertThat(err.toString()).contains("--group reads the partitions the group assigns");
        }
    }

    @Test
    void consoleConsumerRefusesAnEmptyGroupAsAUsageError() {
        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new ConsoleConsumer())
                .setErr(new PrintWriter(err))
                .execute("--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--group", "");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--group must not be empty").doesNotContain("Exception");
    }

    @Test
    void consoleConsumerRefusesAGroupTheWireCannotCarryWithOneLine() {
        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new ConsoleConsumer())
                .setErr(new PrintWriter(err))
                .execute("--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--group", "g".repeat(40_000));
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString()).contains("group.id is 40000 UTF-8 bytes").doesNotContain("\tat ");
    }

    @Test
    void aMalformedBootstrapAddressIsAUsageErrorOfEveryToolBeforeAnyConnection() {
        String reason = "Invalid value for option '--bootstrap-server': expected host:port, got 'garbage'";
        assertUsageError(new TopicsCommand(), reason, "--bootstrap-server", "garbage", "--list");
        assertUsageError(new ConfigsCommand(), reason, "--bootstrap-server", "garbage", "--topic", "t", "--describe");
        assertUsageError(new ConsumerGroupsCommand(), reason, "--bootstrap-server", "garbage", "--list");
        assertUsageError(new TransactionsCommand(), reason, "--bootstrap-server", "garbage", "list");
        assertUsageError(new ConsoleConsumer(), reason, "--bootstrap-server", "garbage", "--topic", "t");
        assertUsageError(new ConsoleProducer(), reason, "--bootstrap-server", "garbage", "--topic", "t");
        assertUsageError(new LogDirsCommand(), reason, "--bootstrap-server", "garbage", "--describe");
        assertUsageError(new GetOffsetsCommand(), reason, "--bootstrap-server", "garbage", "--topic", "t");
        // One good entry does not hide a bad one; a port out of range is malformed too.
        assertUsageError(
                new TopicsCommand(),
                "Invalid value for option '--bootstrap-server': port out of range: 70000",
                "--bootstrap-server",
                "127.0.0.1:9092,127.0.0.1:70000",
                "--list");

        // The control-plane tools (their own command lines, as their mains build them).
        Object[] controllerTools = {new ClusterCommand(), new MetadataQuorumCommand(), new LeaderElectionCommand()};
        String[][] controllerArgs = {{}, {"describe"}, {"--election-type", "preferred", "--all-topic-partitions"}};
        for (int i = 0; i < controllerTools.length; i++) {
            List<String> args = new ArrayList<>(List.of("--bootstrap-controller", "host-without-port"));
            args.addAll(List.of(controllerArgs[i]));
            ToolRun run =
                    ToolRun.run(Tools.withVersion(new CommandLine(controllerTools[i])), args.toArray(String[]::new));
            assertThat(run.exit()).as(run.err()).isEqualTo(2);
            assertThat(run.err())
                    .contains(
                            "Invalid value for option '--bootstrap-controller': expected host:port, got 'host-without-port'");
        }
    }
}
