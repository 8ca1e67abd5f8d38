package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our consumer at both isolation levels against a real broker whose partition holds interleaved
 * transactions. Transactional batches (as the Go SDK sends them: producer id and sequence, no
 * isTransactional bit) and markers are appended through the Partition API, as in {@link
 * TransactionalFetchTest}, until transactional Produce is wired.
 */
@IntegrationTest
class ReadCommittedConsumerTest {
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    private static final long P = 1000;
    private static final long Q = 1001;
    private static final long R = 1002;

    StellflowServer server;
    Partition partition;
    String topic;
    TopicPartition tp;

    @BeforeEach
    void start(TestInfo test) throws Exception {
        server = BROKERS.get("nio");
        // One topic per invocation (a parameterized test runs once per value).
        topic = test.getTestMethod().orElseThrow().getName() + "-"
                + Integer.toHexString(test.getDisplayName().hashCode());
        try (StellflowAdmin admin = new StellflowAdmin(clientProps())) {
            admin.createTopic(topic, 1);
        }
        Wait.until(Duration.ofSeconds(10), () -> TestBroker.partition(server, topic, 0) != null, "partition hosted");
        partition = TestBroker.partition(server, topic, 0);
        tp = new TopicPartition(topic, 0);
    }

    private Properties clientProps() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        return p;
    }

    private static ByteBuf batch(String value) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
        b.append(1_000, null, value.getBytes(StandardCharsets.UTF_8));
        b.close();
        return out;
    }

    private long plain(String value) throws Exception {
        ByteBuf out = batch(value);
        try {
            return partition.appendAsLeader(out);
        } finally {
            out.release();
        }
    }

    private long txn(long pid, int seq, long txnSequence, String value) throws Exception {
        ByteBuf out = batch(value);
        try {
            RecordBatchLayout.setProducerFields(out, 0, pid, (short) 0, seq);
            long offset = partition.appendTransactionalAsLeader(out, null, txnSequence);
            assertThat(offset).as("append of " + value).isNotNegative();
            return offset;
        } finally {
            out.release();
        }
    }

    private long marker(long pid, boolean commit, long txnSequence) throws Exception {
        long offset = partition.appendTransactionMarker(pid, (short) 0, commit, 0, txnSequence);
        assertThat(offset).as("marker of " + pid).isNotNegative();
        return offset;
    }

    private StellflowConsumer consumer(String isolation) {
        return consumer(isolation, 1 << 20);
    }

    private StellflowConsumer consumer(String isolation, int maxPartitionFetchBytes) {
        Properties p = clientProps();
        p.setProperty("max.partition.fetch.bytes", Integer.toString(maxPartitionFetchBytes));
        p.setProperty("isolation.level", isolation);
        p.setProperty("auto.offset.reset", "earliest");
        p.setProperty("group.id", topic + "-" + isolation);
        p.setProperty("enable.auto.commit", "false");
        p.setProperty("fetch.max.wait.ms", "50");
        StellflowConsumer c = new StellflowConsumer(p);
        c.assign(List.of(tp));
        return c;
    }

    /** Polls until the position reaches {@code offset}, collecting "offset:value". */
    private List<String> readTo(StellflowConsumer c, long offset, List<String> into) {
        Wait.until(
                Duration.ofSeconds(20),
                () -> {
                    for (ConsumerRecord r : c.poll(Duration.ofMillis(50))) {
                        into.add(r.offset() + ":" + new String(r.value(), StandardCharsets.UTF_8));
                    }
                    return c.position(tp) >= offset;
                },
                "position " + offset + " of " + tp);
        return into;
    }

    /** 1 byte: each answer holds one batch, so transactions span many answers. */
    @ParameterizedTest
    @ValueSource(ints = {1 << 20, 1})
    void readCommittedSeesCommittedRecordsOnlyAndReachesTheLso(int maxPartitionFetchBytes) throws Exception {
        assertThat(plain("a")).isEqualTo(0);
        assertThat(txn(P, 0, 1, "p1-x")).isEqualTo(2); // BEGIN P at 1
        assertThat(txn(Q, 0, 1, "q1-x")).isEqualTo(4); // BEGIN Q at 3
        assertThat(txn(P, 1, 1, "p1-y")).isEqualTo(5);
        assertThat(marker(P, false, 1)).isEqualTo(6);
        assertThat(marker(Q, true, 1)).isEqualTo(7);
        assertThat(txn(P, 2, 2, "p2-x")).isEqualTo(9); // BEGIN P at 8
        assertThat(marker(P, true, 2)).isEqualTo(10);
        assertThat(plain("b")).isEqualTo(11);
        assertThat(txn(P, 3, 3, "p3-x")).isEqualTo(13); // BEGIN P at 12
        assertThat(txn(P, 4, 3, "p3-y")).isEqualTo(14);
        assertThat(marker(P, false, 3)).isEqualTo(15);
        assertThat(txn(R, 0, 1, "r-open")).isEqualTo(17); // BEGIN R at 16: LSO 16
        assertThat(plain("c")).isEqualTo(18);
        assertThat(partition.lastStableOffset()).isEqualTo(16);

        try (StellflowConsumer committed = consumer("read_committed", maxPartitionFetchBytes);
                StellflowConsumer uncommitted = consumer("read_uncommitted", maxPartitionFetchBytes)) {
            assertThat(committed.endOffsets(List.of(tp))).containsEntry(tp, 16L);
            assertThat(uncommitted.endOffsets(List.of(tp))).containsEntry(tp, 19L);

            List<String> seen = readTo(committed, 16, new ArrayList<>());
            assertThat(seen).containsExactly("0:a", "4:q1-x", "9:p2-x", "11:b");
            assertThat(committed.poll(Duration.ofMillis(200)))
                    .as("nothing past the LSO")
                    .isEmpty();
            assertThat(committed.position(tp)).isEqualTo(16);

            assertThat(readTo(uncommitted, 19, new ArrayList<>()))
                    .containsExactly(
                            "0:a",
                            "2:p1-x",
                            "4:q1-x",
                            "5:p1-y",
                            "9:p2-x",
                            "11:b",
                            "13:p3-x",
                            "14:p3-y",
                            "17:r-open",
                            "18:c");

            // R commits: its marker is the last offset; the consumer moves past it to the LSO (20).
            assertThat(marker(R, true, 1)).isEqualTo(19);
            assertThat(partition.lastStableOffset()).isEqualTo(20);
            readTo(committed, 20, seen);
            assertThat(seen).containsExactly("0:a", "4:q1-x", "9:p2-x", "11:b", "17:r-open", "18:c");
            assertThat(committed.position(tp)).isEqualTo(20);
            assertThat(committed.endOffsets(List.of(tp))).containsEntry(tp, 20L);

            committed.commitSync();
            assertThat(committed.committed(Set.of(tp))).isEqualTo(Map.of(tp, 20L));
        }
    }

    @Test
    void aConsumerEndingOnAnAbortedTransactionMovesPastIt() throws Exception {
        assertThat(plain("a")).isEqualTo(0);
        assertThat(txn(P, 0, 1, "p-x")).isEqualTo(2); // BEGIN P at 1
        assertThat(txn(P, 1, 1, "p-y")).isEqualTo(3);
        assertThat(marker(P, false, 1)).isEqualTo(4);
        try (StellflowConsumer committed = consumer("read_committed")) {
            assertThat(readTo(committed, 5, new ArrayList<>())).containsExactly("0:a");
            assertThat(committed.position(tp)).isEqualTo(5);
            assertThat(plain("b")).isEqualTo(5);
            assertThat(readTo(committed, 6, new ArrayList<>())).containsExactly("5:b");
        }
    }
}
