package io.stellflow.perf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.stellflow.broker.StellflowServer;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.perf.data.Payloads;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue #21 end to end against a real broker in-process: the producer compresses with each codec,
 * the broker validates and stores the batches as produced (smaller on disk), and the consumer and
 * {@code stellflow-perf.sh consume} read back the uncompressed bytes; the perf tool's MB/s counts
 * uncompressed value bytes.
 */
@IntegrationTest
class PerfCompressionTest {
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

    private void createTopic(String name) throws Exception {
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            admin.createTopic(name, 1);
        }
    }

    /** Bytes of the partition's .log segment files. */
    private long logBytes(String topic) throws IOException {
        try (Stream<Path> files = Files.list(dataDir.resolve("data").resolve(topic + "-0"))) {
            return files.filter(f -> f.getFileName().toString().endsWith(".log"))
                    .mapToLong(f -> {
                        try {
                            return Files.size(f);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    .sum();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip", "snappy", "lz4", "zstd"})
    void perfProducesJsonLogsCompressedAndConsumesThemBackUncompressed(String codec) throws Exception {
        String topic = "json-" + codec;
        createTopic(topic);
        int records = 3000;
        JsonNode produced = PerfRun.of(
                        "produce",
                        "--bootstrap-server",
                        bootstrap,
                        "--topic",
                        topic,
                        "--payload",
                        "json-logs",
                        "--record-size",
                        "1024",
                        "--num-records",
                        Integer.toString(records),
                        "--json",
                        "--producer-props",
                        "acks=1",
                        "batch.size=65536",
                        "linger.ms=5",
                        "compression.type=" + codec)
                .json();
        // The first 3000 of the default payload's records: the generator is sequential.
        long valueBytes = Payloads.totalBytes(Payloads.jsonLogRecords(42, records, 1024));
        assertThat(produced.get("errors").asLong()).isZero();
        assertThat(produced.get("records").asLong()).isEqualTo(records);
        assertThat(produced.get("bytes").asLong())
                .as("MB/s counts uncompressed value bytes")
                .isEqualTo(valueBytes);
        long onDisk = logBytes(topic);
        assertThat(onDisk).as("stored compressed, as produced").isPositive().isLessThan(valueBytes / 2);

        JsonNode consumed = PerfRun.of(
                        "consume",
                        "--bootstrap-server",
                        bootstrap,
                        "--topic",
                        topic,
                        "--num-records",
                        Integer.toString(records),
                        "--json")
                .json();
        assertThat(consumed.get("records").asLong()).isEqualTo(records);
        assertThat(consumed.get("bytes").asLong()).isEqualTo(valueBytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"lz4", "zstd"})
    void everyRecordComesBackInOrderWithItsKeyAndValue(String codec) throws Exception {
        String topic = "exact-" + codec;
        createTopic(topic);
        byte[][] values = Payloads.jsonLogRecords(5, 500, 700);
        Properties pp = new Properties();
        pp.setProperty("bootstrap.servers", bootstrap);
        pp.setProperty("compression.type", codec);
        pp.setProperty("compression." + codec + ".level", "1");
        pp.setProperty("batch.size", "8192");
        try (StellflowProducer producer = new StellflowProducer(pp)) {
            for (int i = 0; i < values.length; i++) {
                producer.send(new ProducerRecord(topic, 0, ("k" + i).getBytes(), values[i]));
            }
            producer.flush();
        }
        Properties cp = new Properties();
        cp.setProperty("bootstrap.servers", bootstrap);
        cp.setProperty("auto.offset.reset", "earliest");
        List<ConsumerRecord> got = new ArrayList<>();
        try (StellflowConsumer consumer = new StellflowConsumer(cp)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (got.size() < values.length && System.nanoTime() < deadline) {
                got.addAll(consumer.poll(Duration.ofMillis(200)));
            }
        }
        assertThat(got).hasSize(values.length);
        for (int i = 0; i < values.length; i++) {
            assertThat(got.get(i).offset()).isEqualTo(i);
            assertThat(new String(got.get(i).key())).isEqualTo("k" + i);
            assertThat(got.get(i).value()).isEqualTo(values[i]);
        }
    }
}
