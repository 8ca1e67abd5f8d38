package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.testsupport.IntegrationTest;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class FetchTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    /** One node per transport; each test has a topic of its own, named after it. */
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    RawClient client;
    String topic;

    @BeforeEach
    void start(TestInfo test) throws Exception {
        client = new RawClient(BROKERS.get(transport).port());
        topic = test.getTestMethod().orElseThrow().getName();
        Requests.createTopic(client, topic, 2);
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void goldenG7ShapeFromOffsetZero() throws Exception {
        Requests.produceOne(client, topic, 0, Requests.g2());
        Requests.produceOne(client, topic, 0, Requests.g2());
        PartitionData p = Requests.fetchOne(client, Requests.fetch(topic, 0, 0, 0));
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        assertThat(p.highWatermark()).isEqualTo(2);
        assertThat(p.lastStableOffset()).isEqualTo(2);
        assertThat(p.logStartOffset()).isZero();
        assertThat(p.abortedTransactions()).isEmpty();
        ByteBuf records = p.records();
        assertThat(records.readableBytes()).isEqualTo(288);
        byte[] g2 = Requests.g2();
        for (int batch = 0; batch < 2; batch++) {
            int start = batch * 144;
            assertThat(RecordBatchLayout.baseOffsetDelta(records, start)).isEqualTo(batch);
            assertThat(RecordBatchLayout.batchLength(records, start)).isEqualTo(136);
            assertThat(RecordBatchLayout.partitionLeaderEpoch(records, start)).isZero();
            // From magic on, every byte is exactly as produced, so the CRC is unchanged.
            byte[] tail = ByteBufUtil.getBytes(records, start + RecordBatchLayout.MAGIC_OFFSET, 144 - 12);
            assertThat(tail).isEqualTo(Arrays.copyOfRange(g2, 12, 144));
            assertThat(RecordBatchLayout.crc(records, start)).isEqualTo(0xA99A047F);
        }
        List<DecodedRecord> decoded = RecordBatchReader.decode(records, 0);
        assertThat(decoded).extracting(DecodedRecord::offset).containsExactly(0L, 1L);
        assertThat(new String(decoded.get(1).key())).isEqualTo("order-1001");
    }

    @Test
    void fetchInsideABatchGetsANegativeDeltaAndTheWholeBatch() throws Exception {
        Requests.produceOne(client, topic, 0, Requests.batch(3, 10)); // 0-2
        Requests.produceOne(client, topic, 0, Requests.batch(4, 20)); // 3-6
        Requests.produceOne(client, topic, 0, Requests.batch(1, 30)); // 7
        PartitionData p = Requests.fetchOne(client, Requests.fetch(topic, 0, 5, 0));
        assertThat(RecordBatchLayout.baseOffsetDelta(p.records(), 0)).isEqualTo(-2);
        List<DecodedRecord> decoded = RecordBatchReader.decode(p.records(), 5);
        assertThat(decoded).extracting(DecodedRecord::offset).containsExactly(3L, 4L, 5L, 6L, 7L);
    }

    @Test
    void offsetRangeRules() throws Exception {
        Requests.produceOne(client, topic, 0, Requests.batch(2, 10));
        PartitionData atEnd = Requests.fetchOne(client, Requests.fetch(topic, 0, 2, 0));
        assertThat(atEnd.errorCode()).isEqualTo(Errors.NONE);
        assertThat(atEnd.records().readableBytes()).isZero();
        assertThat(atEnd.highWatermark()).isEqualTo(2);

        PartitionData above = Requests.fetchOne(client, Requests.fetch(topic, 0, 3, 500));
        assertThat(above.errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE);
        assertThat(above.highWatermark()).isEqualTo(2);
        assertThat(above.logStartOffset()).isZero();
        assertThat(above.records().readableBytes()).isZero();

        PartitionData below = Requests.fetchOne(client, Requests.fetch(topic, 0, -1, 0));
        assertThat(below.errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE);
    }

    @Test
    void unknownPartitionAndStaleEpochAreReportedWithUnknownOffsets() throws Exception {
        PartitionData unknown = Requests.fetchOne(client, Requests.fetch("nope", 0, 0, 500));
        assertThat(unknown.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(unknown.highWatermark()).isEqualTo(-1);
        assertThat(unknown.logStartOffset()).isEqualTo(-1);
        assertThat(unknown.lastStableOffset()).isEqualTo(-1);
        assertThat(unknown.records().readableBytes()).isZero();
        assertThat(Requests.fetchOne(client, Requests.fetch(topic, 9, 0, 0)).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(Requests.fetchOne(client, Requests.fetch(topic, 0, 0, 0, 1000, 3))
                        .errorCode())
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(Requests.fetchOne(client, Requests.fetch(topic, 0, 0, 0, 1000, 0))
                        .errorCode())
                .isEqualTo(Errors.NONE);
    }

    @Test
    void sizeLimitsKeepWholeBatchesAndExemptTheFirstBatch() throws Exception {
        for (int i = 0; i < 3; i++) {
            Requests.produceOne(client, topic, 0, Requests.g2()); // 144 bytes each
            Requests.produceOne(client, topic, 1, Requests.g2());
        }
        // partitionMaxBytes 100 < one batch: the first batch still comes, whole.
        PartitionData tiny = Requests.fetchOne(client, Requests.fetch(topic, 0, 0, 0, 100, -1));
        assertThat(tiny.records().readableBytes()).isEqualTo(144);
        // 300 bytes: two whole batches (288), never a cut third one.
        PartitionData two = Requests.fetchOne(client, Requests.fetch(topic, 0, 0, 0, 300, -1));
        assertThat(two.records().readableBytes()).isEqualTo(288);

        // Two partitions, maxBytes 200: partition 0 gets one batch; partition 1's first batch
        // would push the response past maxBytes and is not exempt, so it comes back empty.
        FetchRequest both = new FetchRequest(
                -1,
                0,
                1,
                200,
                (byte) 0,
                0,
                List.of(new FetchTopic(
                        topic,
                        List.of(new FetchPartition(0, -1, 0, -1, 1000), new FetchPartition(1, -1, 0, -1, 1000)))));
        RawClient.Response r = client.call(ApiKeys.FETCH, 42, both);
        List<PartitionData> parts =
                FetchResponse.read(r.body()).responses().get(0).partitions();
        assertThat(parts).extracting(PartitionData::partition).containsExactly(0, 1);
        assertThat(parts.get(0).records().readableBytes()).isEqualTo(144);
        assertThat(parts.get(1).records().readableBytes()).isZero();
        assertThat(parts.get(1).highWatermark()).isEqualTo(3);

        // With room left, partition 1's first batch is exempt from its own partitionMaxBytes only.
        FetchRequest exempt = new FetchRequest(
                -1,
                0,
                1,
                10_000,
                (byte) 0,
                0,
                List.of(new FetchTopic(
                        topic, List.of(new FetchPartition(0, -1, 0, -1, 100), new FetchPartition(1, -1, 0, -1, 100)))));
        List<PartitionData> exemptParts = FetchResponse.read(
                        client.call(ApiKeys.FETCH, 43, exempt).body())
                .responses()
                .get(0)
                .partitions();
        assertThat(exemptParts.get(0).records().readableBytes()).isEqualTo(144);
        assertThat(exemptParts.get(1).records().readableBytes()).isEqualTo(144);
    }

    @Test
    void requestLevelRangeViolationsAreHeaderOnly() throws Exception {
        FetchRequest badReplica = new FetchRequest(
                -2,
                0,
                1,
                100,
                (byte) 0,
                0,
                List.of(new FetchTopic(topic, List.of(new FetchPartition(0, -1, 0, -1, 100)))));
        RawClient.Response r = client.call(ApiKeys.FETCH, 7, badReplica);
        assertThat(r.errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(r.body().readableBytes()).isZero();
    }
}
