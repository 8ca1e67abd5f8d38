package io.stellflow.broker.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.TestTransports;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Several append agents ({@code num.append.agents} above 1, both idle strategies, on each transport): three producers on
 * three threads send to all seven partitions at once, with small batches so that many requests of
 * different connections meet in each partition's queue. Partition i belongs to agent i mod n, one
 * writer per log; two writers on one log would show as a gap, a duplicate or an offset other than the
 * one the send future reported. Every record is read back at its reported offset, each partition's
 * offsets are contiguous from 0, and each producer's records of a partition keep their send order.
 */
@ParameterizedClass
@CsvSource({"2, park, nio", "3, backoff, epoll", "2, backoff, io_uring"})
@IntegrationTest
class MultiAgentProduceTest {
    @Parameter(0)
    int agents;

    @Parameter(1)
    String idleStrategy;

    @Parameter(2)
    String transport;

    private static final int PARTITIONS = 7;
    private static final int PRODUCERS = 3;
    private static final int RECORDS_PER_PRODUCER = 20_000;

    @TempDir
    Path dataDir;

    private StellflowServer start() throws Exception {
        Properties p = SingleBroker.props(dataDir);
        p.setProperty("metrics.port", "0");
        TestTransports.assumeSelected(transport);
        p.setProperty("transport", transport);
        p.setProperty("num.append.agents", Integer.toString(agents));
        p.setProperty("append.idle.strategy", idleStrategy);
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    private static Properties clientProps(StellflowServer server, String... kv) {
        return SingleBroker.clientProps(server, kv);
    }

    /** Value of producer {@code producer}'s record {@code seq}: both, then filler of varying length. */
    private static byte[] value(int producer, int seq) {
        ByteBuffer b = ByteBuffer.allocate(8 + (seq % 32));
        b.putInt(producer).putInt(seq);
        while (b.hasRemaining()) {
            b.put((byte) seq);
        }
        return b.array();
    }

    /** Sends producer {@code id}'s records round-robin over the partitions; returns their metadata. */
    private static List<RecordMetadata> produce(StellflowServer server, int id) throws Exception {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(RECORDS_PER_PRODUCER);
        try (StellflowProducer producer = new StellflowProducer(
                clientProps(server, "acks", "1", "linger.ms", "1", "batch.size", "4096", "client.id", "p" + id))) {
            for (int seq = 0; seq < RECORDS_PER_PRODUCER; seq++) {
                futures.add(producer.send(new ProducerRecord("orders", seq % PARTITIONS, null, value(id, seq))));
            }
            producer.flush();
        }
        List<RecordMetadata> out = new ArrayList<>(RECORDS_PER_PRODUCER);
        for (CompletableFuture<RecordMetadata> f : futures) {
            out.add(f.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    @Test
    void concurrentProducersOnSeveralAgentsGetContiguousOffsetsOneWriterPerLog() throws Exception {
        StellflowServer server = start();
        try {
            try (StellflowAdmin admin = new StellflowAdmin(clientProps(server))) {
                admin.createTopic("orders", PARTITIONS);
            }
            ExecutorService pool = Executors.newFixedThreadPool(PRODUCERS);
            List<Future<List<RecordMetadata>>> sent = new ArrayList<>();
            for (int id = 0; id < PRODUCERS; id++) {
                int producer = id;
                sent.add(pool.submit(() -> produce(server, producer)));
            }
            long[][] offsetOf = new long[PRODUCERS][];
            for (int id = 0; id < PRODUCERS; id++) {
                List<RecordMetadata> md = sent.get(id).get(120, TimeUnit.SECONDS);
                offsetOf[id] = md.stream().mapToLong(RecordMetadata::offset).toArray();
            }
            pool.shutdown();
            assertThat(Thread.getAllStackTraces().keySet().stream()
                            .map(Thread::getName)
                            .filter(n -> n.startsWith("sf-append-"))
                            .distinct()
                            .count())
                    .as("append agent threads")
                    .isEqualTo(agents);

            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                tps.add(new TopicPartition("orders", p));
            }
            try (StellflowConsumer consumer = new StellflowConsumer(clientProps(server))) {
                consumer.assign(tps);
                consumer.seekToBeginning(tps);
                long[] next = new long[PARTITIONS];
                int[][] lastSeq = new int[PRODUCERS][PARTITIONS];
                for (int[] row : lastSeq) {
                    java.util.Arrays.fill(row, -1);
                }
                int total = PRODUCERS * RECORDS_PER_PRODUCER;
                int seen = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (seen < total && System.nanoTime() < deadline) {
                    for (ConsumerRecord r : consumer.poll(Duration.ofMillis(200))) {
                        int p = r.partition();
                        assertThat(r.offset())
                                .as("contiguous offsets in partition %d", p)
                                .isEqualTo(next[p]);
                        ByteBuffer v = ByteBuffer.wrap(r.value());
                        int producer = v.getInt();
                        int seq = v.getInt();
                        assertThat(r.value()).isEqualTo(value(producer, seq));
                        assertThat(seq % PARTITIONS)
                                .as("partition of the record")
                                .isEqualTo(p);
                        assertThat(offsetOf[producer][seq])
                                .as("offset the send reported")
                                .isEqualTo(r.offset());
                        assertThat(seq)
                                .as("producer %d's send order in partition %d", producer, p)
                                .isGreaterThan(lastSeq[producer][p]);
                        lastSeq[producer][p] = seq;
                        next[p]++;
                        seen++;
                    }
                }
                assertThat(seen).isEqualTo(total);
                long[] expected = new long[PARTITIONS];
                for (int seq = 0; seq < RECORDS_PER_PRODUCER; seq++) {
                    expected[seq % PARTITIONS] += PRODUCERS;
                }
                assertThat(next).containsExactly(expected);
                var ends = consumer.endOffsets(tps);
                for (int p = 0; p < PARTITIONS; p++) {
                    assertThat(ends).containsEntry(tps.get(p), expected[p]);
                }
            }
        } finally {
            server.close();
        }
    }
}
