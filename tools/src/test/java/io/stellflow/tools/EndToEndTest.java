package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real broker in-process on 127.0.0.1:0: admin, producer, consumer and the console tools. */
@IntegrationTest
class EndToEndTest {
    @TempDir
    Path dataDir;

    private StellflowServer server;
    private String bootstrap;

    @BeforeEach
    void startBroker() throws Exception {
        server = InProcessBroker.start(dataDir);
        bootstrap = "127.0.0.1:" + server.port();
    }

    @AfterEach
    void stopBroker() {
        server.close();
    }

    private Properties props(String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void tenThousandRecordsComeBackWithEveryOffsetAndValue() throws Exception {
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            admin.createTopic("e2e", 2);
            TopicDescription d = admin.describeTopics(List.of("e2e")).get("e2e");
            assertThat(d.partitions()).hasSize(2);
            assertThat(admin.listTopics()).contains("e2e");
        }
        int n = 10_000;
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(n);
        try (StellflowProducer producer =
                new StellflowProducer(props("acks", "1", "linger.ms", "2", "batch.size", "4096"))) {
            for (int i = 0; i < n; i++) {
                futures.add(producer.send(
                        new ProducerRecord("e2e", i % 2, null, ("value-" + i).getBytes(StandardCharsets.UTF_8))));
            }
            producer.flush();
        }
        for (int i = 0; i < n; i++) {
            RecordMetadata md = futures.get(i).get(0, TimeUnit.SECONDS);
            assertThat(md.partition()).isEqualTo(i % 2);
            assertThat(md.offset()).isEqualTo(i / 2);
        }
        TopicPartition p0 = new TopicPartition("e2e", 0);
        TopicPartition p1 = new TopicPartition("e2e", 1);
        try (StellflowConsumer consumer = new StellflowConsumer(props("auto.offset.reset", "earliest"))) {
            consumer.assign(List.of(p0, p1));
            long[] next = new long[2];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int seen = 0;
            while (seen < n && System.nanoTime() < deadline) {
                for (ConsumerRecord r : consumer.poll(Duration.ofMillis(200))) {
                    assertThat(r.offset()).isEqualTo(next[r.partition()]);
                    long i = r.offset() * 2 + r.partition();
                    assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("value-" + i);
                    next[r.partition()]++;
                    seen++;
                }
            }
            assertThat(seen).isEqualTo(n);
            assertThat(consumer.endOffsets(List.of(p0, p1)))
                    .containsEntry(p0, 5000L)
                    .containsEntry(p1, 5000L);
            consumer.seek(p1, 4990);
            consumer.assign(List.of(p1));
            List<ConsumerRecord> tail = new ArrayList<>();
            while (tail.size() < 10 && System.nanoTime() < deadline) {
                tail.addAll(consumer.poll(Duration.ofMillis(200)));
            }
            assertThat(tail)
                    .extracting(ConsumerRecord::offset)
                    .startsWith(4990L)
                    .hasSize(10);
        }
    }

    @Test
    void consoleProducerToConsoleConsumerIsByteExact() throws Exception {
        assertThat(Tools.commandLine(new TopicsCommand())
                        .execute("--bootstrap-server", bootstrap, "--create", "--topic", "lines", "--partitions", "1"))
                .isZero();
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        for (int i = 0; i < 2000; i++) {
            text.writeBytes(("line " + i + " ünïcødé \t tab \r cr\n").getBytes(StandardCharsets.UTF_8));
            if (i % 100 == 0) {
                text.write('\n'); // empty line
            }
        }
        byte[] input = text.toByteArray();
        ConsoleProducer producer = new ConsoleProducer();
        producer.in = new ByteArrayInputStream(input);
        assertThat(Tools.commandLine(producer)
                        .execute("--bootstrap-server", bootstrap, "--topic", "lines", "--linger-ms", "5"))
                .isZero();
        ConsoleConsumer consumer = new ConsoleConsumer();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        consumer.stdout = out;
        assertThat(Tools.commandLine(consumer)
                        .execute(
                                "--bootstrap-server",
                                bootstrap,
                                "--topic",
                                "lines",
                                "--from-beginning",
                                "--timeout-ms",
                                "1500"))
                .isZero();
        assertThat(out.toByteArray()).isEqualTo(input);
    }

    @Test
    void consoleConsumerPrintsSeveralPartitionsOneAfterTheOther() throws Exception {
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            admin.createTopic("multi", 3);
        }
        try (StellflowProducer producer = new StellflowProducer(props("linger.ms", "0"))) {
            for (int i = 0; i < 30; i++) {
                producer.send(new ProducerRecord(
                        "multi", i % 3, null, ("p" + (i % 3) + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
        ConsoleConsumer consumer = new ConsoleConsumer();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        consumer.stdout = out;
        assertThat(Tools.commandLine(consumer)
                        .execute(
                                "--bootstrap-server",
                                bootstrap,
                                "--topic",
                                "multi",
                                "--from-beginning",
                                "--max-messages",
                                "30"))
                .isZero();
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(30);
        for (int k = 0; k < 30; k++) {
            int partition = k / 10;
            int i = (k % 10) * 3 + partition;
            assertThat(lines[k]).isEqualTo("p" + partition + "-" + i);
        }
    }

    @Test
    void consoleConsumersOfOneGroupPrintEachRecordOnceAcrossRuns() throws Exception {
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            admin.createTopic("grouped", 3);
        }
        try (StellflowProducer producer = new StellflowProducer(props("linger.ms", "0"))) {
            for (int i = 0; i < 30; i++) {
                producer.send(new ProducerRecord("grouped", i % 3, null, ("r" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
        // The first run stops after 12 records (a poll returns more): the commit it leaves with must
        // cover exactly those 12, so the second run prints the other 18 and nothing twice.
        List<String> printed = new ArrayList<>();
        for (String max : new String[] {"12", "100"}) {
            ConsoleConsumer consumer = new ConsoleConsumer();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            consumer.stdout = out;
            assertThat(Tools.commandLine(consumer)
                            .execute(
                                    "--bootstrap-server",
                                    bootstrap,
                                    "--topic",
                                    "grouped",
                                    "--group",
                                    "console-group",
                                    "--from-beginning",
                                    "--max-messages",
                                    max,
                                    "--timeout-ms",
                                    "3000"))
                    .isZero();
            List<String> lines = List.of(out.toString(StandardCharsets.UTF_8).split("\n"));
            assertThat(lines).hasSize(max.equals("12") ? 12 : 18);
            printed.addAll(lines);
        }
        List<String> all = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            all.add("r" + i);
        }
        assertThat(printed).containsExactlyInAnyOrderElementsOf(all);
    }

    @Test
    void aStoppedGroupConsoleConsumerCommitsWhatItPrintedAndLeavesAtOnce() throws Exception {
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            admin.createTopic("stopped", 3);
        }
        try (StellflowProducer producer = new StellflowProducer(props("linger.ms", "0"))) {
            for (int i = 0; i < 30; i++) {
                producer.send(new ProducerRecord("stopped", i % 3, null, ("r" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
        // No --max-messages and no --timeout-ms: only a stop (what Ctrl-C / SIGTERM's hook asks)
        // ends it. Auto commit waits 10 minutes, so the commit checked is the one made when leaving.
        ConsoleConsumer consumer = new ConsoleConsumer();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        consumer.stdout = out;
        CompletableFuture<Integer> run = CompletableFuture.supplyAsync(() -> Tools.commandLine(consumer)
                .execute(
                        "--bootstrap-server",
                        bootstrap,
                        "--topic",
                        "stopped",
                        "--group",
                        "stop-group",
                        "--from-beginning",
                        "--consumer-property",
                        "auto.commit.interval.ms=600000"));
        Wait.until(
                Duration.ofSeconds(60),
                () -> out.toString(StandardCharsets.UTF_8).split("\n").length == 30,
                "the group member printed all 30 records");
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            assertThat(admin.groups().describeGroup("stop-group").members()).hasSize(1);

            assertThat(consumer.requestStop(10_000))
                    .as("the loop closed its consumer")
                    .isTrue();
            assertThat(run.get(10, TimeUnit.SECONDS)).isZero();

            // Left the group (no session timeout to wait for) and committed every printed record.
            assertThat(admin.groups().describeGroup("stop-group").members()).isEmpty();
            assertThat(admin.groups().committedOffsets("stop-group"))
                    .containsOnly(
                            java.util.Map.entry(new TopicPartition("stopped", 0), 10L),
                            java.util.Map.entry(new TopicPartition("stopped", 1), 10L),
                            java.util.Map.entry(new TopicPartition("stopped", 2), 10L));
        }
    }

    @Test
    void aGroupConsoleConsumerOfATopicThatDoesNotExistFailsAtOnce() {
        java.io.StringWriter err = new java.io.StringWriter();
        long t0 = System.nanoTime();
        int rc = Tools.commandLine(new ConsoleConsumer())
                .setErr(new java.io.PrintWriter(err))
                .execute("--bootstrap-server", bootstrap, "--topic", "nosuch", "--group", "g", "--timeout-ms", "60000");
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString()).contains("cannot read topic nosuch");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
    }

    private void createTopic(String name, int partitions) {
        assertThat(Tools.commandLine(new TopicsCommand())
                        .execute(
                                "--bootstrap-server",
                                bootstrap,
                                "--create",
                                "--topic",
                                name,
                                "--partitions",
                                Integer.toString(partitions)))
                .isZero();
    }
}
