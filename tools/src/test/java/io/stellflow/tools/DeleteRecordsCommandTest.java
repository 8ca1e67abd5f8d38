package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-delete-records.sh} against a controller and two brokers, topic of replication
 * factor 2: the leader's log start moves to the offset (-1: the high watermark) and the tool prints
 * the new low watermarks; the follower takes the new start from its fetches; both brokers restarted,
 * the earliest offset stays; an offset above the high watermark, an unknown topic and a bad file are
 * refused in bounded time, deleting nothing.
 */
@IntegrationTest
class DeleteRecordsCommandTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private static ToolRun run(String... args) {
        return ToolRun.run(OneLineUsageErrors.commandLine(new DeleteRecordsCommand()), args);
    }

    private Path json(String name, String content) throws Exception {
        return Files.writeString(dir.resolve(name), content);
    }

    @Test
    void movesTheLogStartOnLeaderAndFollowerAndKeepsItOverARestart() throws Exception {
        try (TwoBrokerCluster cluster = new TwoBrokerCluster(dir)) {
            String bootstrap = cluster.broker(1);
            Properties c = new Properties();
            c.setProperty("bootstrap.servers", bootstrap);
            c.setProperty("acks", "all");
            TopicPartition p0 = new TopicPartition("dr", 0);
            try (StellflowAdmin admin = new StellflowAdmin(c)) {
                admin.createTopic("dr", 2, 2);
                Wait.untilPasses(
                        WAIT,
                        () -> assertThat(admin.listOffsets(p0, StellflowAdmin.LATEST))
                                .isZero(),
                        "dr led");
            }
            try (StellflowProducer producer = new StellflowProducer(c)) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord("dr", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)))
                            .get(20, TimeUnit.SECONDS);
                }
            }

            Path file = json(
                    "delete.json",
                    "{\"partitions\": [{\"topic\": \"dr\", \"partition\": 0, \"offset\": 4},"
                            + " {\"topic\": \"dr\", \"partition\": 1, \"offset\": -1}], \"version\": 1}");
            ToolRun r = run("--bootstrap-server", bootstrap, "--offset-json-file", file.toString());
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out())
                    .isEqualTo("Executing records delete operation\nRecords delete operation completed:\n"
                            + "partition: dr-0\tlow_watermark: 4\npartition: dr-1\tlow_watermark: 0\n");
            try (StellflowAdmin admin = new StellflowAdmin(c)) {
                assertThat(admin.listOffsets(p0, StellflowAdmin.EARLIEST)).isEqualTo(4);
                assertThat(admin.listOffsets(p0, StellflowAdmin.LATEST)).isEqualTo(10);
            }
            // Both replicas hold the new start: the follower from the leader's fetch answers.
            Wait.until(
                    WAIT,
                    () -> cluster.server(1)
                                            .replicaManager()
                                            .hostedPartition("dr", 0)
                                            .logStartOffset()
                                    == 4
                            && cluster.server(2)
                                            .replicaManager()
                                            .hostedPartition("dr", 0)
                                            .logStartOffset()
                                    == 4,
                    "log start 4 on both replicas of dr-0");

            // Above the high watermark: refused, the start stays.
            Path beyond = json(
                    "beyond.json", "{\"partitions\":[{\"topic\":\"dr\",\"partition\":0,\"offset\":11}],\"version\":1}");
            long startNs = System.nanoTime();
            ToolRun refused = run("--bootstrap-server", bootstrap, "--offset-json-file", beyond.toString());
            assertThat(refused.exit()).isEqualTo(1);
            assertThat(refused.out())
                    .contains(
                            "partition: dr-0\terror: OFFSET_OUT_OF_RANGE (offset 11 is above the partition's high watermark)");
            assertThat(refused.err()).startsWith("error: 1 of 1 partition(s) were not deleted");

            Path unknown = json(
                    "unknown.json",
                    "{\"partitions\":[{\"topic\":\"nosuch\",\"partition\":0,\"offset\":1},"
                            + "{\"topic\":\"dr\",\"partition\":7,\"offset\":1}],\"version\":1}");
            ToolRun missing = run("--bootstrap-server", bootstrap, "--offset-json-file", unknown.toString());
            assertThat(missing.exit()).isEqualTo(1);
            assertThat(missing.out())
                    .contains("partition: nosuch-0\terror: UNKNOWN_TOPIC_OR_PARTITION")
                    .contains("partition: dr-7\terror: UNKNOWN_TOPIC_OR_PARTITION");
            assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));

            // Both brokers restarted: each loads the checkpointed start, so the earliest offset stays.
            cluster.stop(2);
            cluster.stop(1);
            cluster.start(1);
            cluster.start(2);
            assertThat(cluster.server(1)
                            .replicaManager()
                            .hostedPartition("dr", 0)
                            .logStartOffset())
                    .isEqualTo(4);
            assertThat(cluster.server(2)
                            .replicaManager()
                            .hostedPartition("dr", 0)
                            .logStartOffset())
                    .isEqualTo(4);
            try (StellflowAdmin admin = new StellflowAdmin(c)) {
                Wait.untilPasses(
                        WAIT,
                        () -> assertThat(admin.listOffsets(p0, StellflowAdmin.EARLIEST))
                                .isEqualTo(4),
                        "earliest offset of dr-0 after the restart");
                assertThat(admin.listOffsets(p0, StellflowAdmin.LATEST)).isEqualTo(10);
            }
        }
    }

    @Test
    void aBadFileIsRefusedWholeInOneLineBeforeAnythingIsSent() throws Exception {
        // No broker listens: every one of these must fail on the file alone.
        String nowhere = "127.0.0.1:1";
        List<String[]> cases = List.of(
                new String[] {
                    "{\"partitions\": [",
                    ": invalid JSON at line 1 column 17: Unexpected end-of-input: expected close marker for Array\n"
                },
                new String[] {"[]", "want an object"},
                new String[] {
                    "{\"version\": 2, \"partitions\": [{\"topic\":\"t\",\"partition\":0,\"offset\":1}]}",
                    "unsupported version 2"
                },
                new String[] {"{\"partitions\": []}", "\"partitions\" is empty"},
                new String[] {"{\"partitions\": [{\"partition\":0,\"offset\":1}]}", "partitions[0]: \"topic\""},
                new String[] {
                    "{\"partitions\": [{\"topic\":\"t\",\"partition\":-1,\"offset\":1}]}",
                    "partitions[0]: \"partition\" must be an integer >= 0"
                },
                new String[] {
                    "{\"partitions\": [{\"topic\":\"t\",\"partition\":0,\"offset\":-2}]}",
                    "partitions[0]: \"offset\" must be an integer >= -1"
                },
                new String[] {
                    "{\"partitions\": [{\"topic\":\"t\",\"partition\":0,\"offset\":\"5\"}]}",
                    "partitions[0]: \"offset\" must be an integer >= -1"
                },
                new String[] {
                    "{\"partitions\": [{\"topic\":\"t\",\"partition\":0,\"offset\":1},"
                            + "{\"topic\":\"t\",\"partition\":0,\"offset\":2}]}",
                    "partitions[1]: partition t-0 is named twice"
                });
        long startNs = System.nanoTime();
        for (int i = 0; i < cases.size(); i++) {
            Path file = json("bad-" + i + ".json", cases.get(i)[0]);
            ToolRun r = run("--bootstrap-server", nowhere, "--offset-json-file", file.toString());
            assertThat(r.exit()).as(cases.get(i)[0]).isEqualTo(1);
            assertThat(r.out()).as(cases.get(i)[0]).isEmpty();
            assertThat(r.err())
                    .as(cases.get(i)[0])
                    .startsWith("error: --offset-json-file " + file)
                    .contains(cases.get(i)[1]);
            assertThat(r.err().strip().lines()).hasSize(1);
            assertThat(r.err()).doesNotContain("Source", "StreamReadFeature");
        }
        ToolRun absent = run(
                "--bootstrap-server",
                nowhere,
                "--offset-json-file",
                dir.resolve("absent.json").toString());
        assertThat(absent.exit()).isEqualTo(1);
        assertThat(absent.err())
                .isEqualTo("error: --offset-json-file " + dir.resolve("absent.json") + " does not exist\n");
        ToolRun noFile = run("--bootstrap-server", nowhere);
        assertThat(noFile.exit()).isEqualTo(2);
        assertThat(noFile.err()).startsWith("error: Missing required option: '--offset-json-file");
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
    }
}
