package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsResponse;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fetch and ListOffsets over a socket on a broker whose partition holds transactions. The
 * transactional appends and markers go through the Partition API (exact offsets without a
 * coordinator; the Produce path is {@code TransactionalProduceTest}), with batches as the Go SDK sends them:
 * producer id and sequence set, no isTransactional bit.
 */
@IntegrationTest
class TransactionalFetchTest {
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    RawClient client;
    Partition partition;
    String t;

    @BeforeEach
    void start(TestInfo test) throws Exception {
        StellflowServer server = BROKERS.get("nio");
        client = new RawClient(server.port());
        t = test.getTestMethod().orElseThrow().getName();
        Requests.createTopic(client, t, 1);
        partition = TestBroker.partition(server, t, 0);
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    private void txn(long pid, int seq, String value) throws Exception {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
            b.append(1_000, null, value.getBytes(StandardCharsets.UTF_8));
            b.close();
            RecordBatchLayout.setProducerFields(out, 0, pid, (short) 0, seq);
            assertThat(RecordBatchLayout.attributes(out, 0) & RecordBatchLayout.TRANSACTIONAL_FLAG_MASK)
                    .isZero();
            assertThat(partition.appendTransactionalAsLeader(out, null, 1)).isNotNegative();
        } finally {
            out.release();
        }
    }

    private void plain(String value) throws Exception {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
        b.append(1_000, null, value.getBytes(StandardCharsets.UTF_8));
        b.close();
        byte[] bytes = new byte[out.readableBytes()];
        out.readBytes(bytes);
        out.release();
        assertThat(Requests.produceOne(client, t, 0, bytes).errorCode()).isEqualTo(Errors.NONE);
    }

    private FetchResponse.PartitionData fetch(long offset, byte isolation) throws Exception {
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                1 << 20,
                isolation,
                0,
                List.of(new FetchRequest.FetchTopic(
                        t, List.of(new FetchRequest.FetchPartition(0, -1, offset, -1L, 1 << 20)))));
        return Requests.fetchOne(client, request);
    }

    /** Base offsets as an SDK computes them; fails on a control batch. */
    private static List<Long> bases(FetchResponse.PartitionData d, long fetchOffset) {
        List<Long> bases = new ArrayList<>();
        ByteBuf r = d.records();
        for (int p = r.readerIndex(); p < r.writerIndex(); p += RecordBatchLayout.batchSize(r, p)) {
            assertThat(ControlRecordLayout.isControl(r, p))
                    .as("a control batch reached a consumer")
                    .isFalse();
            bases.add(fetchOffset + RecordBatchLayout.baseOffsetDelta(r, p));
        }
        return bases;
    }

    private long latest(byte isolation) throws Exception {
        ListOffsetsRequest request = new ListOffsetsRequest(
                -1,
                isolation,
                List.of(new ListOffsetsRequest.ListOffsetsTopic(
                        t, List.of(new ListOffsetsRequest.ListOffsetsPartition(0, -1, -1L, 1)))));
        RawClient.Response r = client.call(ApiKeys.LIST_OFFSETS, Requests.nextCorrelationId(), request);
        return ListOffsetsResponse.read(r.body())
                .topics()
                .get(0)
                .partitions()
                .get(0)
                .offset();
    }

    @Test
    void readCommittedSeesCommittedDataOnlyAndTheAbortedListOverTheWire() throws Exception {
        plain("p0"); // 0
        txn(5, 0, "aborted"); // BEGIN 1, 2
        txn(6, 0, "open"); // BEGIN 3, 4
        assertThat(partition.appendTransactionMarker(5, (short) 0, false, 0, 1)).isEqualTo(5);
        plain("p6"); // 6
        assertThat(latest(FetchRequest.READ_UNCOMMITTED)).isEqualTo(7);
        assertThat(latest(FetchRequest.READ_COMMITTED)).isEqualTo(3);

        FetchResponse.PartitionData committed = fetch(0, FetchRequest.READ_COMMITTED);
        assertThat(committed.lastStableOffset()).isEqualTo(3);
        assertThat(committed.highWatermark()).isEqualTo(7);
        assertThat(bases(committed, 0)).containsExactly(0L, 2L);
        assertThat(committed.abortedTransactions()).containsExactly(new FetchResponse.AbortedTransaction(5, 1));

        FetchResponse.PartitionData uncommitted = fetch(0, FetchRequest.READ_UNCOMMITTED);
        assertThat(bases(uncommitted, 0)).containsExactly(0L, 2L, 4L, 6L);
        assertThat(uncommitted.lastStableOffset()).isEqualTo(3);
        assertThat(bases(fetch(5, FetchRequest.READ_UNCOMMITTED), 5))
                .as("at the ABORT marker")
                .containsExactly(6L);

        assertThat(partition.appendTransactionMarker(6, (short) 0, true, 0, 1)).isEqualTo(7);
        FetchResponse.PartitionData after = fetch(3, FetchRequest.READ_COMMITTED);
        assertThat(after.lastStableOffset()).isEqualTo(8);
        assertThat(bases(after, 3)).containsExactly(4L, 6L);
        // The range [3, 8) still holds producer 5's ABORT marker (5): its transaction overlaps it.
        assertThat(after.abortedTransactions()).containsExactly(new FetchResponse.AbortedTransaction(5, 1));
        assertThat(fetch(6, FetchRequest.READ_COMMITTED).abortedTransactions()).isEmpty();
        assertThat(latest(FetchRequest.READ_COMMITTED)).isEqualTo(8);
    }
}
