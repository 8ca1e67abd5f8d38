package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ListOffsetsResponse.ListOffsetsPartitionResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
class ListOffsetsTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    /** One node per transport; each test has a topic of its own, named after it. */
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    RawClient client;
    String t;

    @BeforeEach
    void start(TestInfo test) throws Exception {
        client = new RawClient(BROKERS.get(transport).port());
        t = test.getTestMethod().orElseThrow().getName();
        Requests.createTopic(client, t, 1);
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void emptyPartition() throws Exception {
        assertThat(Requests.listOffsets(client, t, 0, -1, -2, 5))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 0, List.of()));
        assertThat(Requests.listOffsets(client, t, 0, -1, -1, 5))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 0, List.of(0L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 0, 1).errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE);
    }

    @Test
    void workedExampleWithRecordGranularity() throws Exception {
        // Offsets 0..3 with timestamps 1000..4000; 1 and 2 share one batch so the lookup must look
        // inside the batch.
        Requests.produceOne(client, t, 0, Requests.batch(1, 1000));
        ByteBuf two = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(two, 2000);
        b.append(2000, null, new byte[] {1});
        b.append(3000, null, new byte[] {2});
        b.close();
        Requests.produceOne(client, t, 0, ByteBufUtil.getBytes(two));
        Requests.produceOne(client, t, 0, Requests.batch(1, 4000));

        assertThat(Requests.listOffsets(client, t, 0, -1, -2, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 0, List.of(0L)));
        assertThat(Requests.listOffsets(client, t, 0, 0, -1, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 4, List.of(4L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 2500, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, 3000, 2, List.of(2L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 2000, 10))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, 2000, 1, List.of(1L, 2L, 3L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 5000, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.OFFSET_OUT_OF_RANGE, 0, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, t, 0, -1, -2, 2).offsets()).containsExactly(0L, 1L);
    }

    /**
     * Decision 9.s of the spec: the SDKs send maxTimestamp = baseTimestamp whatever the records'
     * timestampDeltas say. Batches of 6 records at base + 0, 1000, ..., 5000 ms (two batches per
     * Produce, as the Java SDK packs them), header max = base, over ~1 KiB segments: every lookup
     * must find the first record at or after the target, also one only a record inside a batch
     * reaches. Before the fix, base + 4500 in the last batch answered OFFSET_OUT_OF_RANGE.
     */
    @Test
    void timeLookupsFindRecordsInsideSdkBatchesAcrossSegments() throws Exception {
        String topic = t + "-small-segments";
        StellflowServer server = BROKERS.get(transport);
        assertThat(TestBroker.createTopic(
                        server, topic, 1, Map.of("segment.bytes", "1024", "index.interval.bytes", "512")))
                .isEqualTo(ErrorCode.NONE);
        long base0 = 1_700_000_000_000L;
        List<long[]> records = new ArrayList<>(); // {offset, timestamp}
        for (int request = 0; request < 10; request++) {
            ByteBuf set = Unpooled.buffer();
            long firstBase = base0 + 20_000L * request;
            sdkBatch(set, firstBase);
            sdkBatch(set, firstBase + 10_000);
            PartitionResponse r = Requests.produceOne(client, topic, 0, ByteBufUtil.getBytes(set));
            set.release();
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            for (int i = 0; i < 12; i++) {
                records.add(new long[] {r.baseOffset() + i, firstBase + (i / 6) * 10_000L + (i % 6) * 1_000L});
            }
        }
        assertThat(TestBroker.partition(server, topic, 0).log().segmentCount()).isGreaterThan(3);

        long lastBase = base0 + 20_000L * 9 + 10_000;
        assertThat(Requests.listOffsets(client, topic, 0, -1, lastBase + 4_500, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, lastBase + 5_000, 119, List.of(119L)));
        for (long t0 = base0 - 1; t0 <= lastBase + 5_001; t0 += 250) {
            long target = t0;
            long[] want =
                    records.stream().filter(rec -> rec[1] >= target).findFirst().orElse(null);
            ListOffsetsPartitionResponse got = Requests.listOffsets(client, topic, 0, -1, target, 1);
            if (want == null) {
                assertThat(got.errorCode()).as("target %d", target).isEqualTo(Errors.OFFSET_OUT_OF_RANGE);
            } else {
                assertThat(got)
                        .as("target %d", target)
                        .isEqualTo(new ListOffsetsPartitionResponse(
                                0, Errors.NONE, 0, want[1], want[0], List.of(want[0])));
            }
        }
    }

    /** Appends a batch as the SDKs build it: records at base + 0, 1000, ..., 5000 ms, header max = base. */
    private static void sdkBatch(ByteBuf out, long baseMs) {
        int start = out.writerIndex();
        RecordBatchBuilder b = new RecordBatchBuilder(out, baseMs);
        for (int i = 0; i < 6; i++) {
            b.append(baseMs + i * 1_000L, null, new byte[] {(byte) i});
        }
        b.close();
        out.setLong(start + RecordBatchLayout.MAX_TIMESTAMP_OFFSET, baseMs);
        out.setInt(start + RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, start));
    }

    @Test
    void partitionErrors() throws Exception {
        assertThat(Requests.listOffsets(client, t, 0, -1, -1, 0))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.INVALID_REQUEST, 0, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, t, 0, -1, -3, 1).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(Requests.listOffsets(client, t, 0, 7, -1, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NOT_LEADER_OR_FOLLOWER, 0, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, "nope", 0, -1, -1, 1))
                .isEqualTo(
                        new ListOffsetsPartitionResponse(0, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, t, 1, -1, -1, 1).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }
}
