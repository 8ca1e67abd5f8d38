package io.stellflow.perf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue #20: {@code stellflow-perf.sh produce --producer-props enable.idempotence=true} runs our
 * idempotent producer (here with lz4, so compressed batches carry the producer fields too) against a
 * real broker: every record arrives, the stored batches carry a producer id and sequences, and the
 * records read back are as many as were sent. Idempotence with {@code acks=1} is refused naming the
 * keys. Without {@code enable.idempotence} the tool is idempotent as Kafka's ProducerPerformance is
 * (our producer's default since issue #20, point 3), unless {@code acks} is not all; {@code
 * enable.idempotence=false} turns it off, as the perf lab's non-idempotent cases do.
 */
@IntegrationTest
class PerfIdempotenceTest {
    @TempDir
    Path dataDir;

    private StellflowServer server;
    private String bootstrap;

    @BeforeEach
    void startBroker() throws Exception {
        server = InProcessBroker.start(dataDir);
        bootstrap = "127.0.0.1:" + server.port();
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            admin.createTopic("idem", 1);
        }
    }

    @AfterEach
    void stopBroker() {
        server.close();
    }

    @Test
    void perfProducesIdempotentlyWithCompressionAndEveryRecordIsStoredOnce() throws Exception {
        int records = 3000;
        JsonNode produced = PerfRun.of(
                        "produce",
                        "--bootstrap-server",
                        bootstrap,
                        "--topic",
                        "idem",
                        "--record-size",
                        "512",
                        "--num-records",
                        Integer.toString(records),
                        "--json",
                        "--producer-props",
                        "enable.idempotence=true",
                        "acks=all",
                        "batch.size=16384",
                        "compression.type=lz4")
                .json();
        assertThat(produced.get("errors").asLong()).isZero();
        assertThat(produced.get("records").asLong()).isEqualTo(records);

        ByteBuf log = Unpooled.wrappedBuffer(firstSegment());
        int batches = 0;
        long records0 = 0;
        int expectedSequence = 0;
        for (int pos = 0; pos + RecordBatchLayout.HEADER_SIZE <= log.writerIndex(); ) {
            assertThat(RecordBatchLayout.producerId(log, pos))
                    .as("producer id of batch %d", batches)
                    .isNotNegative();
            assertThat(RecordBatchLayout.baseSequence(log, pos))
                    .as("base sequence of batch %d", batches)
                    .isEqualTo(expectedSequence);
            int count = RecordBatchLayout.recordCount(log, pos);
            expectedSequence += count;
            records0 += count;
            batches++;
            pos += RecordBatchLayout.batchSize(log, pos);
        }
        assertThat(batches).isGreaterThan(1);
        assertThat(records0).as("records stored once").isEqualTo(records);

        JsonNode consumed = PerfRun.of(
                        "consume",
                        "--bootstrap-server",
                        bootstrap,
                        "--topic",
                        "idem",
                        "--num-records",
                        Integer.toString(records),
                        "--json")
                .json();
        assertThat(consumed.get("records").asLong()).isEqualTo(records);
    }

    @Test
    void idempotenceWithAcksOneIsRefusedNamingTheKeys() {
        PerfRun run = PerfRun.of(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "idem",
                "--record-size",
                "100",
                "--num-records",
                "10",
                "--producer-props",
                "enable.idempotence=true",
                "acks=1");
        assertThat(run.exit()).isNotZero();
        assertThat(run.err()).contains("enable.idempotence=true needs acks=all (-1), not acks=1");
    }

    @ParameterizedTest(name = "--producer-props {0}: idempotent {1}")
    @CsvSource({"'', true", "acks=all, true", "enable.idempotence=false, false", "acks=1, false"})
    void idempotentByDefaultUnlessAcksIsNotAllOrItIsTurnedOff(String props, boolean idempotent) throws Exception {
        String topic = "default-" + idempotent + "-" + Math.abs(props.hashCode());
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            admin.createTopic(topic, 1);
        }
        List<String> args = new ArrayList<>(List.of(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                topic,
                "--record-size",
                "100",
                "--num-records",
                "500",
                "--json",
                "--producer-props",
                "batch.size=2048"));
        if (!props.isEmpty()) {
            args.add(props);
        }
        JsonNode produced = PerfRun.of(args.toArray(String[]::new)).json();
        assertThat(produced.get("errors").asLong()).isZero();

        ByteBuf log = Unpooled.wrappedBuffer(firstSegment(topic));
        int batches = 0;
        for (int pos = 0; pos + RecordBatchLayout.HEADER_SIZE <= log.writerIndex(); ) {
            long producerId = RecordBatchLayout.producerId(log, pos);
            if (idempotent) {
                assertThat(producerId).as("producer id of batch %d", batches).isNotNegative();
            } else {
                assertThat(producerId).as("producer id of batch %d", batches).isEqualTo(-1L);
                assertThat(RecordBatchLayout.baseSequence(log, pos)).isEqualTo(-1);
            }
            batches++;
            pos += RecordBatchLayout.batchSize(log, pos);
        }
        assertThat(batches).isGreaterThan(1);
    }

    /** The bytes of the partition's first (only) segment. */
    private byte[] firstSegment() throws Exception {
        return firstSegment("idem");
    }

    private byte[] firstSegment(String topic) throws Exception {
        try (Stream<Path> files = Files.list(dataDir.resolve("data").resolve(topic + "-0"))) {
            Path log = files.filter(f -> f.getFileName().toString().endsWith(".log"))
                    .sorted()
                    .findFirst()
                    .orElseThrow();
            return Files.readAllBytes(log);
        }
    }
}
