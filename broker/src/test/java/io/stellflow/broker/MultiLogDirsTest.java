package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.topic.BrokerMetadata;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/** Several {@code log.dirs}: placement on the least loaded dir, reload of every dir, checkpoints. */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class MultiLogDirsTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    private Properties props(List<Path> dirs) {
        Properties props = TestBroker.props(dirs.get(0), transport);
        props.setProperty(
                "log.dirs", String.join(",", dirs.stream().map(Path::toString).toList()));
        props.setProperty("log.flush.offset.checkpoint.interval.ms", "50");
        return props;
    }

    @Test
    void partitionsSpreadOverTheLeastLoadedDirsAndAreAllServedAfterARestart() throws Exception {
        List<Path> dirs = List.of(
                NODES.dir().resolve("d1"),
                NODES.dir().resolve("d2"),
                NODES.dir().resolve("d3"));
        try (StellflowServer server = TestBroker.start(props(dirs));
                RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "orders", 4);
            Requests.createTopic(client, "audit", 2);
            for (int p = 0; p < 4; p++) {
                Requests.produceOne(client, "orders", p, Requests.batch(p + 1, 1000 + p));
            }
            Requests.produceOne(client, "audit", 1, Requests.batch(5, 2000));
            // 6 partitions over 3 empty dirs, each new one on the dir holding the fewest so far.
            assertThat(dirs.get(0).resolve("orders-0")).isDirectory();
            assertThat(dirs.get(1).resolve("orders-1")).isDirectory();
            assertThat(dirs.get(2).resolve("orders-2")).isDirectory();
            assertThat(dirs.get(0).resolve("orders-3")).isDirectory();
            assertThat(dirs.get(1).resolve("audit-0")).isDirectory();
            assertThat(dirs.get(2).resolve("audit-1")).isDirectory();
            assertThat(server.logManager().partitionCounts()).containsExactly(2, 2, 2);
            assertThat(dirs.get(0).resolve(BrokerMetadata.FILE_NAME)).isRegularFile();
            assertThat(dirs.get(1).resolve(BrokerMetadata.FILE_NAME)).doesNotExist();
            // The periodic checkpoint task writes each log's recovery point while the broker runs.
            Path recoveryPoint = dirs.get(2).resolve("orders-2").resolve("recovery-point");
            Wait.until(Duration.ofSeconds(10), () -> Files.exists(recoveryPoint), "the recovery point written");
        }
        for (int p = 0; p < 3; p++) { // a clean shutdown marker in every dir
            assertThat(dirs.get(p).resolve("orders-" + p).resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE))
                    .exists();
        }
        StellflowServer server = NODES.start(props(dirs));
        try (RawClient client = new RawClient(server.port())) {
            for (int p = 0; p < 4; p++) {
                PartitionData data = Requests.fetchOne(client, Requests.fetch("orders", p, 0, 0));
                List<DecodedRecord> records = RecordBatchReader.decode(data.records(), 0);
                assertThat(records).hasSize(p + 1);
                assertThat(records.get(0).timestampMs()).isEqualTo(1000 + p);
                assertThat(data.highWatermark()).isEqualTo(p + 1);
            }
            assertThat(Requests.fetchOne(client, Requests.fetch("audit", 1, 0, 0))
                            .highWatermark())
                    .isEqualTo(5);
            assertThat(Requests.produceOne(client, "orders", 3, Requests.g2()).baseOffset())
                    .isEqualTo(4);
            Requests.createTopic(client, "late", 1);
            assertThat(dirs.get(0).resolve("late-0")).isDirectory(); // ties go to the first dir
            assertThat(server.logManager().partitionCounts()).containsExactly(3, 2, 2);
        }
    }
}
