package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.server.common.file.SmallTmpfs;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * Issue #23's outage, tried as an operator would: a broker whose log dir is a small real file
 * system (tmpfs), filled by produce traffic with one offset and one time index entry per batch.
 * Every Produce is answered (first acknowledged, then {@code BROKER_NOT_AVAILABLE}), no append
 * agent dies, the acknowledged records stay readable, and the episode is one {@code DISK_FULL}
 * line naming the file, the dir and the free space, without a stack trace per request.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class DiskFullTest {
    @Parameter
    String transport;

    @TempDir
    Path dir;

    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private Logger root;

    @BeforeEach
    void captureLogs() {
        root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        lines.start();
        root.addAppender(lines);
    }

    @AfterEach
    void release() {
        root.detachAppender(lines);
    }

    private static List<Thread> agents() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("sf-append-"))
                .toList();
    }

    @Test
    void aFullLogDirAnswersEveryProduceWithAnErrorAndKeepsWhatWasAcknowledged() throws Exception {
        Properties props = TestBroker.props(dir, transport);
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(8 << 20)) {
            Path logDir = fs.dir().resolve("data");
            props.setProperty("log.dirs", logDir.toString());
            props.setProperty("log.index.interval.bytes", "0"); // one index entry per batch
            props.setProperty("log.index.size.max.bytes", "65536");
            props.setProperty("log.segment.bytes", "262144");
            int acknowledged = 0;
            List<Short> answers = new ArrayList<>();
            try (StellflowServer server = TestBroker.start(props);
                    RawClient client = new RawClient(server.port())) {
                Requests.createTopic(client, "full", 1);
                List<Thread> agentsBefore = agents();
                assertThat(agentsBefore).isNotEmpty();
                for (int i = 0; i < 20; i++) {
                    PartitionResponse r = Requests.produceOne(client, "full", 0, Requests.batch(1, 1_000_000L + i));
                    assertThat(r.errorCode()).isEqualTo(Errors.NONE);
                    acknowledged++;
                }
                // Leave about 200 KiB: the traffic below fills it, rolling segments on the way.
                fs.fill(fs.dir().resolve("filler"));
                Files.delete(fs.dir().resolve("filler"));
                Files.write(fs.dir().resolve("filler"), new byte[(int) (fs.usableBytes() - (200 << 10))]);

                for (int i = 20; i < 5_000; i++) {
                    // Each call fails the test if the broker does not answer within the client timeout.
                    PartitionResponse r =
                            Requests.produceOne(client, "full", 0, Requests.batchOfSize(1, 200, 1_000_000L + i));
                    answers.add(r.errorCode());
                    if (r.errorCode() == Errors.NONE) {
                        assertThat(answers)
                                .as("nothing acknowledged after a failure")
                                .doesNotContain(Errors.BROKER_NOT_AVAILABLE);
                        acknowledged++;
                    } else if (answers.stream().filter(c -> c != Errors.NONE).count() >= 50) {
                        break;
                    }
                }
                LoggerFactory.getLogger(DiskFullTest.class)
                        .info(
                                "{}: {} Produce requests answered after the fill: {} acknowledged, {} BROKER_NOT_AVAILABLE",
                                transport,
                                answers.size(),
                                answers.stream().filter(c -> c == Errors.NONE).count(),
                                answers.stream()
                                        .filter(c -> c == Errors.BROKER_NOT_AVAILABLE)
                                        .count());
                assertThat(answers).as("the disk filled up").contains(Errors.BROKER_NOT_AVAILABLE);
                assertThat(answers).containsOnly(Errors.NONE, Errors.BROKER_NOT_AVAILABLE);
                assertThat(agentsBefore).as("no append agent died").allMatch(Thread::isAlive);

                // Earlier data intact: every acknowledged record is read back, Metadata/Fetch still work.
                long offset = 0;
                int read = 0;
                while (offset < acknowledged) {
                    PartitionData fetched = Requests.fetchOne(client, Requests.fetch("full", 0, offset, 0));
                    assertThat(fetched.errorCode()).isEqualTo(Errors.NONE);
                    int n = RecordBatchReader.decode(fetched.records(), offset).size();
                    assertThat(n).as("records at offset " + offset).isPositive();
                    read += n;
                    offset += n;
                }
                assertThat(read).isEqualTo(acknowledged);
            }
            List<ILoggingEvent> diskFull = lines.list.stream()
                    .filter(e -> e.getFormattedMessage().startsWith(LogEvents.DISK_FULL + " "))
                    .toList();
            assertThat(diskFull).as("one DISK_FULL per episode").hasSize(1);
            assertThat(diskFull.get(0).getFormattedMessage())
                    .matches("DISK_FULL partition=full-0 dir=" + logDir.resolve("full-0")
                            + " file=\\S*/full-0/\\d{20}\\.(log|index|timeindex) freeBytes=\\d+ operation=append"
                            + " error=No space left on device");
            assertThat(lines.list.stream()
                            .filter(e -> e.getLevel() == Level.ERROR && e.getThrowableProxy() != null)
                            // ours only: Ratis may log a JMX name clash of an earlier node in this JVM
                            .filter(e -> e.getLoggerName().startsWith("io.stellflow."))
                            .map(ILoggingEvent::getFormattedMessage))
                    .as("no stack trace per failed request")
                    .isEmpty();
        }
    }
}
