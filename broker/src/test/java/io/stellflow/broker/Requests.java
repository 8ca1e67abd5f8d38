package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.GoldenVectors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** Request builders and one-call helpers shared by the broker tests. */
final class Requests {
    /**
     * Golden G2 ({@code docs/spec/wire-protocol.md} §7.8): the worked one-record batch, 144 bytes.
     */
    static final String G2_HEX = GoldenVectors.G2;

    private static final AtomicInteger CORRELATION = new AtomicInteger(1000);

    private Requests() {}

    static int nextCorrelationId() {
        return CORRELATION.incrementAndGet();
    }

    static byte[] g2() {
        return ByteBufUtil.decodeHexDump(G2_HEX);
    }

    /** One batch with {@code count} records "v0".."v{count-1}" at timestamp {@code timestampMs}. */
    static byte[] batch(int count, long timestampMs) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, timestampMs);
        for (int i = 0; i < count; i++) {
            builder.append(timestampMs, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        builder.close();
        return ByteBufUtil.getBytes(out);
    }

    /** A batch of {@code count} records each carrying a {@code valueBytes}-byte value. */
    static byte[] batchOfSize(int count, int valueBytes, long timestampMs) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, timestampMs);
        for (int i = 0; i < count; i++) {
            builder.append(timestampMs, null, new byte[valueBytes]);
        }
        builder.close();
        return ByteBufUtil.getBytes(out);
    }

    /** G2 with its record length raised from 83 to 200 (past the batch end), CRC recomputed. */
    static byte[] recordLengthPastBatchEnd() {
        byte[] batch = g2();
        ByteBuf buf = Unpooled.wrappedBuffer(batch);
        buf.setInt(RecordBatchLayout.RECORDS_OFFSET, 200);
        buf.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(buf, 0));
        return batch;
    }

    static byte[] concat(byte[]... parts) {
        ByteBuf out = Unpooled.buffer();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return ByteBufUtil.getBytes(out);
    }

    static ProduceRequest produce(String topic, int partition, byte[] records) {
        return produce(topic, partition, records, (short) -1);
    }

    static ProduceRequest produce(String topic, int partition, byte[] records, short acks) {
        return new ProduceRequest(
                null,
                acks,
                30_000,
                List.of(new ProduceRequest.TopicData(
                        topic,
                        List.of(new ProduceRequest.PartitionData(
                                partition, records == null ? null : Unpooled.wrappedBuffer(records))))));
    }

    static FetchRequest fetch(String topic, int partition, long fetchOffset, int maxWaitMs) {
        return fetch(topic, partition, fetchOffset, maxWaitMs, 1_048_576, -1);
    }

    static FetchRequest fetch(String topic, int partition, long fetchOffset, int maxWaitMs, int maxBytes, int epoch) {
        return new FetchRequest(
                -1,
                maxWaitMs,
                1,
                maxBytes,
                (byte) 0,
                0,
                List.of(new FetchTopic(
                        topic, List.of(new FetchPartition(partition, epoch, fetchOffset, -1L, maxBytes)))));
    }

    static CreateTopicResponse createTopic(RawClient client, String topic, int partitions) throws IOException {
        RawClient.Response r =
                client.call(ApiKeys.CREATE_TOPIC, nextCorrelationId(), CreateTopicRequest.of(topic, partitions));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return CreateTopicResponse.read(r.body());
    }

    static ProduceResponse.PartitionResponse produceOne(RawClient client, String topic, int partition, byte[] records)
            throws IOException {
        RawClient.Response r = client.call(ApiKeys.PRODUCE, nextCorrelationId(), produce(topic, partition, records));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return ProduceResponse.read(r.body()).responses().get(0).partitions().get(0);
    }

    static FetchResponse.PartitionData fetchOne(RawClient client, FetchRequest request) throws IOException {
        RawClient.Response r = client.call(ApiKeys.FETCH, nextCorrelationId(), request);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return FetchResponse.read(r.body()).responses().get(0).partitions().get(0);
    }

    static ListOffsetsResponse.ListOffsetsPartitionResponse listOffsets(
            RawClient client, String topic, int partition, int epoch, long timestamp, int maxNumOffsets)
            throws IOException {
        ListOffsetsRequest request = new ListOffsetsRequest(
                -1,
                (byte) 0,
                List.of(new ListOffsetsRequest.ListOffsetsTopic(
                        topic,
                        List.of(new ListOffsetsRequest.ListOffsetsPartition(
                                partition, epoch, timestamp, maxNumOffsets)))));
        RawClient.Response r = client.call(ApiKeys.LIST_OFFSETS, nextCorrelationId(), request);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return ListOffsetsResponse.read(r.body()).topics().get(0).partitions().get(0);
    }
}
