package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.topic.Partition;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowProducer;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-console-consumer.sh --offset earliest|latest|N}, the {@code --property print.*}
 * output fields and {@code --formatter} (json; Kafka's default formatter class names) against a real
 * broker, and one-line errors for bad offsets, properties, formatters, topics and partitions.
 */
@IntegrationTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleConsumerOptionsTest {
    /**
     * One broker for the class: the tests only read {@code fmt}'s fixed records (the transactional
     * one writes its own topic, the group one its own group), so a broker per method (about 2 s to
     * start and fill each) bought no independence.
     */
    @TempDir
    static Path dir;

    @RegisterExtension
    final LogLines keysLog = LogLines.of("io.stellflow.client.ClientKeys");

    private StellflowServer server;
    private String bootstrap;

    @BeforeAll
    void start() throws Exception {
        server = InProcessBroker.startNio(dir);
        bootstrap = "127.0.0.1:" + server.port();
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        try (StellflowAdmin admin = new StellflowAdmin(p)) {
            admin.createTopic("fmt", 2);
        }
        p.setProperty("acks", "1");
        try (StellflowProducer producer = new StellflowProducer(p)) {
            producer.send(new ProducerRecord("fmt", 0, bytes("k0"), bytes("v0"), 1000))
                    .get(10, TimeUnit.SECONDS);
            producer.send(new ProducerRecord("fmt", 0, bytes("k1"), bytes("v1"), 2000))
                    .get(10, TimeUnit.SECONDS);
            producer.send(new ProducerRecord("fmt", 0, null, bytes("v2"), 3000)).get(10, TimeUnit.SECONDS);
            producer.send(new ProducerRecord("fmt", 1, bytes("k9"), bytes("v9"), 9000))
                    .get(10, TimeUnit.SECONDS);
            // Not UTF-8: --formatter json gives its Base64.
            producer.send(new ProducerRecord("fmt", 1, null, new byte[] {(byte) 0xff, 0x00}, 9500))
                    .get(10, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    void stop() {
        server.close();
    }

    private record Run(int exit, String out, String err) {}

    private Run run(String... args) {
        return runOn(new String[] {"--topic", "fmt"}, args);
    }

    @Test
    void offsetAndPrintPropertiesChooseWhereToStartAndWhatToPrint() {
        Run all = run(
                "--partition",
                "0",
                "--offset",
                "1",
                "--max-messages",
                "2",
                "--property",
                "print.timestamp=true",
                "--property",
                "print.partition=true",
                "--property",
                "print.offset=true",
                "--property",
                "print.key=true");
        assertThat(all.exit()).as(all.err()).isZero();
        assertThat(all.out())
                .isEqualTo(
                        "CreateTime:2000\tPartition:0\tOffset:1\tk1\tv1\nCreateTime:3000\tPartition:0\tOffset:2\tnull\tv2\n");

        Run earliest = run(
                "--partition",
                "0",
                "--offset",
                "earliest",
                "--max-messages",
                "1",
                "--property",
                "print.key=true",
                "--property",
                "key.separator=:");
        assertThat(earliest.exit()).as(earliest.err()).isZero();
        assertThat(earliest.out()).isEqualTo("k0:v0\n");

        Run latest = run("--partition", "1", "--offset", "latest", "--timeout-ms", "1000");
        assertThat(latest.exit()).as(latest.err()).isZero();
        assertThat(latest.out()).isEmpty();

        Run plain = run("--partition", "1", "--offset", "0", "--max-messages", "1");
        assertThat(plain.out()).isEqualTo("v9\n");
    }

    /** Appends {@code value} as producer {@code pid}'s transactional batch (sequence {@code seq}). */
    private static void txn(Partition partition, long pid, int seq, String value) throws Exception {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
            b.append(1_000, null, bytes(value));
            b.close();
            RecordBatchLayout.setProducerFields(out, 0, pid, (short) 0, seq);
            assertThat(partition.appendTransactionalAsLeader(out, null, 1)).isNotNegative();
        } finally {
            out.release();
        }
    }

    @Test
    void isolationLevelReadCommittedLeavesOutAbortedRecords() throws Exception {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        try (StellflowAdmin admin = new StellflowAdmin(p)) {
            admin.createTopic("txn", 1);
        }
        Wait.until(
                Duration.ofSeconds(10),
                () -> server.replicaManager().hostedPartition("txn", 0) != null,
                "txn-0 hosted");
        Partition partition = server.replicaManager().hostedPartition("txn", 0);
        // Transactions as the coordinator will drive them (Produce is not wired for them yet).
        txn(partition, 2000, 0, "aborted");
        assertThat(partition.appendTransactionMarker(2000, (short) 0, false, 0, 1))
                .isNotNegative();
        txn(partition, 2001, 0, "committed");
        assertThat(partition.appendTransactionMarker(2001, (short) 0, true, 0, 1))
                .isNotNegative();

        String[] common = {"--topic", "txn", "--from-beginning", "--timeout-ms", "1500"};
        Run committed = runOn(common, "--isolation-level", "read_committed");
        assertThat(committed.exit()).as(committed.err()).isZero();
        assertThat(committed.out()).isEqualTo("committed\n");
        Run uncommitted = runOn(common, "--isolation-level", "read_uncommitted");
        assertThat(uncommitted.out()).isEqualTo("aborted\ncommitted\n");
        assertThat(runOn(common).out()).as("read_uncommitted by default").isEqualTo("aborted\ncommitted\n");

        Run bad = runOn(common, "--isolation-level", "committed");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("--isolation-level must be read_committed or read_uncommitted, got 'committed'");
    }

    /** As {@link #run} with {@code first} (which names its own topic) before {@code rest}. */
    private Run runOn(String[] first, String... rest) {
        ConsoleConsumer consumer = new ConsoleConsumer();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        consumer.stdout = out;
        StringWriter err = new StringWriter();
        String[] all = new String[2 + first.length + rest.length];
        all[0] = "--bootstrap-server";
        all[1] = bootstrap;
        System.arraycopy(first, 0, all, 2, first.length);
        System.arraycopy(rest, 0, all, 2 + first.length, rest.length);
        int exit = OneLineUsageErrors.commandLine(consumer)
                .setErr(new PrintWriter(err, true))
                .execute(all);
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString());
    }

    @Test
    void consumerKeysAreNotWarnedAboutByTheAdminClientBesideTheConsumer() {
        // --group sets group.id and auto.offset.reset; --consumer-property adds a consumer key: the
        // consumer reads all three, so nothing may be warned about (the admin client used to).
        Run group = run(
                "--group",
                "g1",
                "--from-beginning",
                "--max-messages",
                "5",
                "--consumer-property",
                "fetch.max.wait.ms=100");
        assertThat(group.exit()).as(group.err()).isZero();
        assertThat(group.out().split("\n")).hasSize(5);
        Run assigned = run(
                "--partition", "0", "--offset", "0", "--max-messages", "1", "--consumer-property", "fetch.min.bytes=1");
        assertThat(assigned.exit()).as(assigned.err()).isZero();
        assertThat(keysLog.messages()).isEmpty();

        // A key no client reads is still named, once, by the consumer.
        Run typo =
                run("--partition", "0", "--offset", "0", "--max-messages", "1", "--consumer-property", "no.such.key=1");
        assertThat(typo.exit()).as(typo.err()).isZero();
        assertThat(keysLog.messages())
                .containsExactly(
                        "ignoring unknown consumer config key(s) [no.such.key]: the consumer does not read them");
    }

    @Test
    void maxMessagesMinusOneIsNoLimitAndAnOffsetPastTheEndIsSaid() {
        Run unlimited = run("--partition", "0", "--offset", "0", "--max-messages", "-1", "--timeout-ms", "1000");
        assertThat(unlimited.exit()).as(unlimited.err()).isZero();
        assertThat(unlimited.out()).isEqualTo("v0\nv1\nv2\n");

        assertFails(2, "error: --max-messages must be at least 1, or -1 for no limit, got 0", "--max-messages", "0");
        assertFails(2, "error: --max-messages must be at least 1, or -1 for no limit, got -5", "--max-messages", "-5");

        Run past = run("--partition", "0", "--offset", "99", "--timeout-ms", "500");
        assertThat(past.exit()).as(past.err()).isZero();
        assertThat(past.out()).isEmpty();
        assertThat(past.err())
                .isEqualTo("warning: --offset 99 is past the log end 3 of fmt-0; the consumer resets by"
                        + " auto.offset.reset=latest\n");

        Run within = run("--partition", "0", "--offset", "3", "--timeout-ms", "300");
        assertThat(within.err()).as("the log end itself is not past it").isEmpty();
    }

    @Test
    void excludeInternalIsAcceptedAndRefusesAnInternalTopic() {
        Run plain = run("--exclude-internal", "--partition", "1", "--offset", "0", "--max-messages", "1");
        assertThat(plain.exit()).as(plain.err()).isZero();
        assertThat(plain.out()).isEqualTo("v9\n");

        StringWriter err = new StringWriter();
        int exit = Tools.commandLine(new ConsoleConsumer())
                .setErr(new PrintWriter(err, true))
                .execute("--bootstrap-server", bootstrap, "--topic", "__consumer_offsets", "--exclude-internal");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString())
                .isEqualTo("error: --topic __consumer_offsets is an internal topic and --exclude-internal is given\n"
                        + OneLineUsageErrors.HINT + "\n");
    }

    @Test
    void formatterJsonPrintsOneObjectPerRecordAndKafkasClassNamesMeanDefault() {
        Run json = run("--partition", "1", "--offset", "0", "--max-messages", "2", "--formatter", "json");
        assertThat(json.exit()).as(json.err()).isZero();
        assertThat(json.out())
                .isEqualTo("{\"topic\":\"fmt\",\"partition\":1,\"offset\":0,\"timestamp\":9000,\"key\":\"k9\","
                        + "\"value\":\"v9\",\"headers\":[]}\n"
                        + "{\"topic\":\"fmt\",\"partition\":1,\"offset\":1,\"timestamp\":9500,\"key\":null,"
                        + "\"value\":\"/wA=\",\"valueEncoding\":\"base64\",\"headers\":[]}\n");

        for (String kafkaName : new String[] {
            "default", "kafka.tools.DefaultMessageFormatter", "org.apache.kafka.tools.consumer.DefaultMessageFormatter"
        }) {
            Run r = run(
                    "--partition",
                    "0",
                    "--offset",
                    "0",
                    "--max-messages",
                    "1",
                    "--formatter",
                    kafkaName,
                    "--property",
                    "print.key=true");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).as(kafkaName).isEqualTo("k0\tv0\n");
        }
    }

    @Test
    void badOffsetsPropertiesTopicsAndPartitionsFailWithOneLineWithinSeconds() {
        assertFails(
                2,
                "error: unknown --formatter 'com.example.MyFormatter': the built-in formatters are default and json",
                "--formatter",
                "com.example.MyFormatter");
        assertFails(
                2,
                "error: --formatter json takes no --property (got print.key)",
                "--formatter",
                "json",
                "--property",
                "print.key=true");
        assertFails(
                2,
                "error: --offset must be earliest, latest or an offset >= 0, got '-5'",
                "--partition",
                "0",
                "--offset",
                "-5");
        assertFails(
                2,
                "error: --offset must be earliest, latest or an offset >= 0, got 'soon'",
                "--partition",
                "0",
                "--offset",
                "soon");
        assertFails(2, "error: --property print.key must be true or false, got 'yes'", "--property", "print.key=yes");
        assertFails(2, "error: unknown --property no.such (known: ", "--property", "no.such=1");
        assertFails(1, "error: topic fmt has 2 partition(s), no partition 7", "--partition", "7", "--offset", "0");
    }

    @Test
    void aMissingTopicFailsWithOneLineWithinSeconds() {
        long startNs = System.nanoTime();
        ConsoleConsumer consumer = new ConsoleConsumer();
        consumer.stdout = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        int exit = OneLineUsageErrors.commandLine(consumer)
                .setErr(new PrintWriter(err, true))
                .execute("--bootstrap-server", bootstrap, "--topic", "nosuch", "--partition", "0", "--offset", "0");
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
        assertThat(exit).isEqualTo(1);
        assertThat(err.toString()).startsWith("error: cannot read topic nosuch");
        assertThat(err.toString().strip().lines()).hasSize(1);
    }

    private void assertFails(int exit, String errorStart, String... args) {
        long startNs = System.nanoTime();
        Run r = run(args);
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
        assertThat(r.exit()).as(r.err()).isEqualTo(exit);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).startsWith(errorStart);
        assertThat(r.err().strip().lines()).as(r.err()).hasSize(exit == OneLineUsageErrors.USAGE_EXIT ? 2 : 1);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
