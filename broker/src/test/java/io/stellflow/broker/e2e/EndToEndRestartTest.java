package io.stellflow.broker.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The first slice's end-to-end promise: 100k records produced through the real client to a
 * 3-partition topic on a real broker survive a broker restart on the same data directory and come
 * back in order, each at the offset its send future reported.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class EndToEndRestartTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    private static final int RECORDS = 100_000;
    private static final int PARTITIONS = 3;

    @TempDir
    Path dataDir;

    private StellflowServer start() throws Exception {
        Properties p = SingleBroker.props(dataDir);
        p.setProperty("transport", transport);
        org.junit.jupiter.api.Assumptions.assumeTrue(
                io.stellflow.broker.network.Transport.isAvailable(
                        io.stellflow.broker.network.TransportType.parse("transport", transport)),
                transport + " unavailable");
        // Small segments so the 100k records (about 3.7 MB per partition) span several segments
        // and the restart reloads a rolled log, not one file.
        p.setProperty("log.segment.bytes", Integer.toString(1 << 20));
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    private static Properties clientProps(StellflowServer server, String... kv) {
        return SingleBroker.clientProps(server, kv);
    }

    /** Value of record i: its index, then filler so that records have different lengths. */
    private static byte[] value(int i) {
        ByteBuffer b = ByteBuffer.allocate(8 + (i % 64));
        b.putLong(i);
        while (b.hasRemaining()) {
            b.put((byte) i);
        }
        return b.array();
    }

    @Test
    void hundredThousandRecordsSurviveARestartAndComeBackInOrder() throws Exception {
        long[] expectedOffset = new long[RECORDS];
        int[] partitionOf = new int[RECORDS];
        StellflowServer server = start();
        try {
            try (StellflowAdmin admin = new StellflowAdmin(clientProps(server))) {
                admin.createTopic("orders", PARTITIONS);
            }
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(RECORDS);
            try (StellflowProducer producer =
                    new StellflowProducer(clientProps(server, "acks", "-1", "linger.ms", "5", "batch.size", "65536"))) {
                for (int i = 0; i < RECORDS; i++) {
                    byte[] key = ("key-" + (i % 1000)).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    futures.add(producer.send(new ProducerRecord("orders", null, key, value(i))));
                }
                producer.flush();
            }
            for (int i = 0; i < RECORDS; i++) {
                RecordMetadata md = futures.get(i).get(30, TimeUnit.SECONDS);
                expectedOffset[i] = md.offset();
                partitionOf[i] = md.partition();
            }
        } finally {
            server.close();
        }

        long[] countPerPartition = new long[PARTITIONS];
        for (int p : partitionOf) {
            countPerPartition[p]++;
        }
        assertThat(countPerPartition).doesNotContain(0L);

        StellflowServer restarted = start();
        try (StellflowConsumer consumer = new StellflowConsumer(clientProps(restarted))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                tps.add(new TopicPartition("orders", p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            for (int p = 0; p < PARTITIONS; p++) {
                assertThat(consumer.endOffsets(tps)).containsEntry(tps.get(p), countPerPartition[p]);
            }
            long[] next = new long[PARTITIONS];
            int seen = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (seen < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord r : consumer.poll(Duration.ofMillis(200))) {
                    assertThat(r.offset())
                            .as("offset order in partition %d", r.partition())
                            .isEqualTo(next[r.partition()]);
                    int i = (int) ByteBuffer.wrap(r.value()).getLong();
                    assertThat(r.value()).isEqualTo(value(i));
                    assertThat(partitionOf[i]).isEqualTo(r.partition());
                    assertThat(expectedOffset[i]).isEqualTo(r.offset());
                    next[r.partition()]++;
                    seen++;
                }
            }
            assertThat(seen).isEqualTo(RECORDS);
            assertThat(next).containsExactly(countPerPartition);
        } finally {
            restarted.close();
        }
    }
}
