package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.server.common.file.SmallTmpfs;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue #23, points 2 and 5, on one broker: a log dir that fails while serving goes offline alone
 * (its partitions answer an error, the other dir keeps serving, new partitions avoid it), and
 * CreateTopic on a full log dir never gives a leader that answers {@code NOT_LEADER_OR_FOLLOWER};
 * once space is freed the topic takes writes without a restart, and a restart keeps them.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class LogDirFailureTest {
    @Parameter
    String transport;

    @TempDir
    Path dir;

    @RegisterExtension
    final LogLines lines = LogLines.root();

    private static PartitionResponse produce(RawClient client, String topic, int partition, byte[] batch) {
        try {
            return Requests.produceOne(client, topic, partition, batch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** CreateTopic's per-partition error (the first partition's, or the topic-level one). */
    private static short createTopic(RawClient client, String topic) throws IOException {
        RawClient.Response r =
                client.call(ApiKeys.CREATE_TOPIC, Requests.nextCorrelationId(), CreateTopicRequest.of(topic, 1));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return CreateTopicResponse.read(r.body()).partitions().get(0).errorCode();
    }

    private static List<Long> timestamps(RawClient client, String topic, long endOffset) throws IOException {
        List<Long> out = new ArrayList<>();
        long offset = 0;
        while (offset < endOffset) {
            PartitionData fetched = Requests.fetchOne(client, Requests.fetch(topic, 0, offset, 0));
            assertThat(fetched.errorCode()).isEqualTo(Errors.NONE);
            List<DecodedRecord> records = RecordBatchReader.decode(fetched.records(), offset);
            assertThat(records).as(topic + " at offset " + offset).isNotEmpty();
            for (DecodedRecord r : records) {
                offset++;
                out.add(r.timestampMs());
            }
        }
        return out;
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    /**
     * Waits until the controller has taken the leadership of {@code topic}, created while the only log
     * dir is full, away from this broker: its Produce is answered {@code LEADER_NOT_AVAILABLE}, never
     * {@code NOT_LEADER_OR_FOLLOWER} meanwhile. The heartbeat that reported the partition failed was
     * built after its creation failed on the full dir, so it also said that no dir can take a new
     * replica, and the controller refuses the next CreateTopic.
     *
     * <p>Without this wait the loop created topics until such a heartbeat got through: as many as
     * CreateTopics fit in its delay (22 when it came 1.5 s late, as on a loaded machine). Once space
     * is freed, each new partition takes its preallocated indexes (160 KiB here) and a dir takes one
     * only with a new segment's room free (1.16 MiB), so the 4 MiB file system held about 15 of them:
     * the others, and the topic created once space was freed, never found room, and the test timed
     * out waiting for them.
     */
    private static void awaitReportedFailed(RawClient client, String topic) {
        Wait.until(
                Duration.ofSeconds(20),
                () -> {
                    short error =
                            produce(client, topic, 0, Requests.batch(1, 5000)).errorCode();
                    assertThat(error)
                            .as(topic + ": created while full, never NOT_LEADER_OR_FOLLOWER")
                            .isIn(Errors.BROKER_NOT_AVAILABLE, Errors.LEADER_NOT_AVAILABLE);
                    return error == Errors.LEADER_NOT_AVAILABLE;
                },
                topic + " reported failed to the controller, its leadership taken away");
    }

    @Test
    void aRemovedLogDirGoesOfflineAloneAndTheOtherDirKeepsServing() throws Exception {
        Path d1 = dir.resolve("d1");
        Path d2 = dir.resolve("d2");
        Properties props = TestBroker.props(dir, transport);
        props.setProperty("log.dirs", d1 + "," + d2);
        props.setProperty("metadata.log.dir", dir.resolve("metadata").toString());
        try (StellflowServer server = TestBroker.start(props);
                RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "spread", 2); // spread-0 on d1, spread-1 on d2
            Requests.createTopic(client, "extra", 1); // on d1 (a tie goes to the first dir)
            assertThat(d2.resolve("spread-1")).isDirectory();
            assertThat(d1.resolve("extra-0")).isDirectory();
            for (int p = 0; p < 2; p++) {
                assertThat(produce(client, "spread", p, Requests.batch(1, 1000 + p))
                                .errorCode())
                        .isEqualTo(Errors.NONE);
            }

            deleteTree(d2); // the disk is gone while the broker serves

            Wait.until(
                    Duration.ofSeconds(20),
                    () -> !lines.messages(LogEvents.LOG_DIR_OFFLINE).isEmpty(),
                    "LOG_DIR_OFFLINE for " + d2);
            Wait.until(
                    Duration.ofSeconds(20),
                    () -> produce(client, "spread", 1, Requests.batch(1, 3000)).errorCode()
                            != Errors.BROKER_NOT_AVAILABLE,
                    "the controller takes the offline partition's leadership (RF=1: no leader)");
            assertThat(produce(client, "spread", 1, Requests.batch(1, 3001)).errorCode())
                    .as("a partition of the offline dir: no leader, never an acknowledgement")
                    .isEqualTo(Errors.LEADER_NOT_AVAILABLE);

            // The other dir keeps taking produce and fetch.
            for (int i = 0; i < 5; i++) {
                assertThat(produce(client, "spread", 0, Requests.batch(1, 2000 + i))
                                .errorCode())
                        .isEqualTo(Errors.NONE);
            }
            assertThat(timestamps(client, "spread", 6)).containsExactly(1000L, 2000L, 2001L, 2002L, 2003L, 2004L);

            // A new partition goes to the online dir, though d2 holds fewer partitions.
            Requests.createTopic(client, "after", 1);
            assertThat(d1.resolve("after-0")).isDirectory();
            assertThat(produce(client, "after", 0, Requests.batch(1, 4000)).errorCode())
                    .isEqualTo(Errors.NONE);
        }
        List<String> offline = lines.messages(LogEvents.LOG_DIR_OFFLINE);
        assertThat(offline).as("one event per dir").hasSize(1);
        assertThat(offline.get(0))
                .startsWith("LOG_DIR_OFFLINE dir=" + d2 + " reason=")
                .endsWith("partitions=[spread-1]");
    }

    @Test
    void createTopicOnAFullDirNeverNamesALeaderThatCannotServeAndRecoversWithoutRestart() throws Exception {
        Properties props = TestBroker.props(dir, transport);
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(4 << 20)) {
            Path logDir = fs.dir().resolve("data");
            props.setProperty("log.dirs", logDir.toString());
            props.setProperty("metadata.log.dir", dir.resolve("metadata").toString());
            props.setProperty("log.index.size.max.bytes", "65536");
            props.setProperty("log.segment.bytes", "262144");
            props.setProperty("log.dir.failure.retry.ms", "200");
            props.setProperty("broker.heartbeat.interval.ms", "200");
            List<String> created = new ArrayList<>();
            try (StellflowServer server = TestBroker.start(props);
                    RawClient client = new RawClient(server.port())) {
                Requests.createTopic(client, "before", 1);
                assertThat(produce(client, "before", 0, Requests.batch(1, 1000)).errorCode())
                        .isEqualTo(Errors.NONE);
                fs.fill(fs.dir().resolve("filler"));

                // Until the broker's heartbeat says no dir can take a replica, a CreateTopic may
                // succeed: its partition is then reported failed, never served as a healthy leader.
                // After that, CreateTopic answers INVALID_REPLICATION_FACTOR.
                int[] n = {0};
                Wait.until(
                        Duration.ofSeconds(20),
                        () -> {
                            String name = "full-" + n[0]++;
                            short error;
                            try {
                                error = createTopic(client, name);
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                            if (error == Errors.NONE) {
                                created.add(name);
                                awaitReportedFailed(client, name);
                                return false;
                            }
                            // CreateTopic v0 folds the controller's INVALID_REPLICATION_FACTOR into
                            // INVALID_REQUEST (no error code of its own in v0); the log names why.
                            assertThat(error).isIn(Errors.INVALID_REPLICATION_FACTOR, Errors.INVALID_REQUEST);
                            return true;
                        },
                        "CreateTopic refused while the only log dir is full");
                assertThat(lines.messages())
                        .anyMatch(m ->
                                m.contains("with a writable log dir; brokers [" + server.brokerId() + "] have none"));
                for (String name : created) {
                    assertThat(produce(client, name, 0, Requests.batch(1, 5000)).errorCode())
                            .as(name + ": created while full, never NOT_LEADER_OR_FOLLOWER")
                            .isIn(Errors.BROKER_NOT_AVAILABLE, Errors.LEADER_NOT_AVAILABLE);
                }

                Files.delete(fs.dir().resolve("filler"));
                Wait.until(
                        Duration.ofSeconds(30),
                        () -> {
                            try {
                                return createTopic(client, "late") == Errors.NONE;
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        },
                        "CreateTopic accepted once space is freed");
                created.add("late");
                for (String name : created) {
                    Wait.until(
                            Duration.ofSeconds(30),
                            () -> {
                                PartitionResponse r = produce(client, name, 0, Requests.batch(1, 6000));
                                assertThat(r.errorCode())
                                        .as(name)
                                        .isIn(Errors.NONE, Errors.BROKER_NOT_AVAILABLE, Errors.LEADER_NOT_AVAILABLE);
                                return r.errorCode() == Errors.NONE;
                            },
                            name + " takes writes after the space was freed, without a restart");
                }
                assertThat(produce(client, "before", 0, Requests.batch(1, 1001)).errorCode())
                        .isEqualTo(Errors.NONE);
            }
            try (StellflowServer server = TestBroker.start(props);
                    RawClient client = new RawClient(server.port())) {
                for (String name : created) {
                    assertThat(timestamps(client, name, 1))
                            .as(name + " after a restart")
                            .containsExactly(6000L);
                }
                assertThat(timestamps(client, "before", 2)).containsExactly(1000L, 1001L);
            }
            assertThat(lines.messages())
                    .as("no log of a created topic is taken for another topic's")
                    .noneMatch(m -> m.contains("belongs to another topic id"));
        }
    }
}
