package io.stellflow.protocol;

import static io.stellflow.protocol.support.Bufs.hexOf;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.Header;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import io.stellflow.protocol.support.Bufs;
import io.stellflow.testsupport.GoldenVectors;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The golden vectors G1-G7 of {@code docs/spec/wire-protocol.md} §10 (test-support's {@link
 * GoldenVectors}, one resource file each), byte for byte in both directions, and the negative
 * goldens.
 */
class GoldenVectorsTest {
    static final String G1 = GoldenVectors.G1;
    static final String G2 = GoldenVectors.G2;
    static final String G3 = GoldenVectors.G3;
    static final String G4 = GoldenVectors.G4;
    static final String G5 = GoldenVectors.G5;
    static final String G6 = GoldenVectors.G6;
    static final String G7 = GoldenVectors.G7;
    static final long G2_TIMESTAMP_MS = 1746768000000L;

    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    /** G7 records: G2 with baseOffsetDelta = delta and partitionLeaderEpoch = 3. */
    static String storedG2(int delta) {
        return GoldenVectors.storedG2(delta);
    }

    private ByteBuf frame(RequestHeader header, Consumer<ByteBuf> body) {
        ByteBuf out = bufs.heap();
        int start = Frames.beginFrame(out);
        header.write(out);
        body.accept(out);
        Frames.endFrame(out, start);
        return out;
    }

    private ByteBuf responseFrame(ResponseHeader header, Consumer<ByteBuf> body) {
        ByteBuf out = bufs.heap();
        int start = Frames.beginFrame(out);
        header.write(out);
        body.accept(out);
        Frames.endFrame(out, start);
        return out;
    }

    /** The payload of a hex frame, readerIndex after the length prefix (checked against the size). */
    private ByteBuf payload(String hex) {
        ByteBuf frame = bufs.hex(hex);
        int frameLength = frame.readInt();
        assertThat(frameLength).isEqualTo(frame.readableBytes());
        return frame;
    }

    private ByteBuf g2Batch() {
        ByteBuf out = bufs.heap();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, G2_TIMESTAMP_MS);
        builder.append(
                G2_TIMESTAMP_MS,
                "order-1001".getBytes(UTF_8),
                "{\"amount\":199}".getBytes(UTF_8),
                List.of(new Header("content-type", "application/json".getBytes(UTF_8))));
        builder.close();
        return out;
    }

    @Test
    void g1ApiVersionsRequestEncodesAndDecodesByteForByte() {
        ByteBuf encoded = frame(
                RequestHeader.of(ApiKeys.API_VERSIONS, (short) 0, 1, "c1"),
                b -> new ApiVersionsRequest("stellflow-java-sdk", "0.0.1", List.of()).write(b));
        assertThat(hexOf(encoded)).isEqualTo(G1);

        ByteBuf payload = payload(G1);
        assertThat(RequestHeader.peekCorrelationId(payload)).isEqualTo(1);
        RequestHeader header = RequestHeader.read(payload);
        assertThat(header).isEqualTo(RequestHeader.of(ApiKeys.API_VERSIONS, (short) 0, 1, "c1"));
        assertThat(ApiVersionsRequest.read(payload))
                .isEqualTo(new ApiVersionsRequest("stellflow-java-sdk", "0.0.1", List.of()));
    }

    @Test
    void g2RecordBatchIsBuiltByteForByteWithTheSpecCrc() {
        ByteBuf batch = g2Batch();
        assertThat(hexOf(batch)).isEqualTo(G2);
        assertThat(RecordBatchLayout.crc(batch, 0)).isEqualTo(0xA99A047F);
        assertThat(RecordBatchLayout.computeCrc(batch, 0)).isEqualTo(0xA99A047F);
        assertThat(RecordBatchLayout.batchLength(batch, 0)).isEqualTo(136);
        assertThat(RecordBatchLayout.batchSize(batch, 0)).isEqualTo(144);
        assertThat(RecordBatchValidator.validate(bufs.hex(G2), 1 << 20)).isEqualTo(Errors.NONE);

        List<DecodedRecord> records = RecordBatchReader.decode(bufs.hex(G2), 0);
        assertThat(records)
                .containsExactly(new DecodedRecord(
                        0,
                        G2_TIMESTAMP_MS,
                        "order-1001".getBytes(UTF_8),
                        "{\"amount\":199}".getBytes(UTF_8),
                        List.of(new Header("content-type", "application/json".getBytes(UTF_8)))));
    }

    @Test
    void g3ProduceRequestEncodesAndDecodesByteForByte() {
        ByteBuf records = g2Batch();
        ByteBuf encoded = frame(
                RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 2, "c1"),
                b -> new ProduceRequest(
                                null,
                                (short) -1,
                                30000,
                                List.of(new ProduceRequest.TopicData(
                                        "orders", List.of(new ProduceRequest.PartitionData(0, records)))))
                        .write(b));
        assertThat(hexOf(encoded)).isEqualTo(G3);
        assertThat(records.readerIndex()).as("write does not consume records").isZero();

        ByteBuf payload = payload(G3);
        assertThat(RequestHeader.read(payload)).isEqualTo(RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 2, "c1"));
        ProduceRequest request = ProduceRequest.read(payload);
        assertThat(request.transactionalId()).isNull();
        assertThat(request.acks()).isEqualTo((short) -1);
        assertThat(request.timeoutMs()).isEqualTo(30000);
        assertThat(request.topicData()).hasSize(1);
        assertThat(request.topicData().get(0).topic()).isEqualTo("orders");
        ProduceRequest.PartitionData partition =
                request.topicData().get(0).partitions().get(0);
        assertThat(partition.partition()).isZero();
        assertThat(hexOf(partition.records())).isEqualTo(G2);
        assertThat(RecordBatchValidator.validate(partition.records(), 1 << 20)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchValidator.totalRecordCount(partition.records())).isEqualTo(1);
    }

    @Test
    void g4FetchRequestEncodesAndDecodesByteForByte() {
        FetchRequest expected = new FetchRequest(
                -1,
                500,
                1,
                1048576,
                (byte) 0,
                0,
                List.of(new FetchTopic("orders", List.of(new FetchPartition(0, -1, 100, -1, 1048576)))));
        ByteBuf encoded = frame(RequestHeader.of(ApiKeys.FETCH, (short) 0, 3, "c1"), expected::write);
        assertThat(hexOf(encoded)).isEqualTo(G4);

        ByteBuf payload = payload(G4);
        assertThat(RequestHeader.read(payload).correlationId()).isEqualTo(3);
        assertThat(FetchRequest.read(payload)).isEqualTo(expected);
    }

    @Test
    void g5HeaderOnlyErrorResponse() {
        ByteBuf encoded = responseFrame(ResponseHeader.of(1, Errors.UNSUPPORTED_VERSION), b -> {});
        assertThat(hexOf(encoded)).isEqualTo(G5);
        assertThat(ResponseHeader.read(payload(G5))).isEqualTo(new ResponseHeader(1, (short) 2, (short) 2, 0));
    }

    @Test
    void g6ProduceResponseEncodesAndDecodesByteForByte() {
        ProduceResponse expected = new ProduceResponse(List.of(new ProduceResponse.TopicResponse(
                "orders", List.of(new ProduceResponse.PartitionResponse(0, Errors.NONE, 100, 3, -1, 0)))));
        ByteBuf encoded = responseFrame(ResponseHeader.of(2, Errors.NONE), expected::write);
        assertThat(hexOf(encoded)).isEqualTo(G6);

        ByteBuf payload = payload(G6);
        assertThat(ResponseHeader.read(payload)).isEqualTo(ResponseHeader.of(2, Errors.NONE));
        assertThat(ProduceResponse.read(payload)).isEqualTo(expected);
    }

    @Test
    void g7FetchResponseEncodesAndDecodesToOffsets100And101() {
        ByteBuf records = bufs.hex(storedG2(0) + storedG2(1));
        assertThat(G7).endsWith(storedG2(0) + storedG2(1));
        FetchResponse response = new FetchResponse(
                0,
                List.of(new FetchResponse.FetchableTopicResponse(
                        "orders",
                        List.of(new FetchResponse.PartitionData(0, Errors.NONE, 102, 0, 102, List.of(), records)))));
        ByteBuf encoded = responseFrame(ResponseHeader.of(3, Errors.NONE), response::write);
        String g7 = G7;
        assertThat(hexOf(encoded)).isEqualTo(g7);
        assertThat(encoded.readableBytes()).isEqualTo(362);

        ByteBuf payload = payload(g7);
        assertThat(ResponseHeader.read(payload).correlationId()).isEqualTo(3);
        FetchResponse decoded = FetchResponse.read(payload);
        FetchResponse.PartitionData partition =
                decoded.responses().get(0).partitions().get(0);
        assertThat(partition.highWatermark()).isEqualTo(102);
        assertThat(partition.lastStableOffset()).isEqualTo(102);
        assertThat(partition.logStartOffset()).isZero();
        assertThat(RecordBatchLayout.partitionLeaderEpoch(
                        partition.records(), partition.records().readerIndex()))
                .isEqualTo(3);
        List<DecodedRecord> decodedRecords = RecordBatchReader.decode(partition.records(), 100);
        assertThat(decodedRecords).extracting(DecodedRecord::offset).containsExactly(100L, 101L);
        assertThat(decodedRecords).extracting(DecodedRecord::timestampMs).containsOnly(G2_TIMESTAMP_MS);
    }

    @Test
    void g3WithOneCrcByteFlippedIsCorruptMessage() {
        ByteBuf payload = payload(G3);
        RequestHeader.read(payload);
        ByteBuf records = ProduceRequest.read(payload)
                .topicData()
                .get(0)
                .partitions()
                .get(0)
                .records();
        int crcIndex = records.readerIndex() + RecordBatchLayout.CRC_OFFSET + 2;
        records.setByte(crcIndex, records.getByte(crcIndex) ^ 0x01);
        assertThat(RecordBatchValidator.validate(records, 1 << 20)).isEqualTo(Errors.CORRUPT_MESSAGE);
    }

    @Test
    void g3WithMagic2IsInvalidRecord() {
        ByteBuf payload = payload(G3);
        RequestHeader.read(payload);
        ByteBuf records = ProduceRequest.read(payload)
                .topicData()
                .get(0)
                .partitions()
                .get(0)
                .records();
        records.setByte(records.readerIndex() + RecordBatchLayout.MAGIC_OFFSET, 2);
        assertThat(RecordBatchValidator.validate(records, 1 << 20)).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void g1WithApiVersion1StillDecodesTheHeaderForTheBrokerToReject() {
        ByteBuf payload = payload(G1);
        payload.setShort(payload.readerIndex() + RequestHeader.API_VERSION_OFFSET, 1);
        RequestHeader header = RequestHeader.read(payload);
        assertThat(header.apiVersion()).isEqualTo((short) 1);
        assertThat(header.correlationId()).isEqualTo(1);
    }

    @Test
    void g1WithHeaderVersion3IsUnsupportedVersion() {
        ByteBuf payload = payload(G1);
        payload.setShort(payload.readerIndex() + RequestHeader.HEADER_VERSION_OFFSET, 3);
        assertThatThrownBy(() -> RequestHeader.read(payload.duplicate()))
                .isInstanceOfSatisfying(
                        ProtocolException.class, e -> assertThat(e.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION));
        assertThat(RequestHeader.peekCorrelationId(payload)).isEqualTo(1);
    }

    @Test
    void g1WithTrafficClass4IsInvalidRequestAnsweredWithTheSpecBytes() {
        ByteBuf payload = payload(G1);
        payload.setByte(payload.readerIndex() + 25, 4); // frame offset 29 = trafficClass
        assertThatThrownBy(() -> RequestHeader.read(payload.duplicate()))
                .isInstanceOfSatisfying(
                        ProtocolException.class, e -> assertThat(e.errorCode()).isEqualTo(Errors.INVALID_REQUEST));
        ByteBuf answer = responseFrame(
                ResponseHeader.of(RequestHeader.peekCorrelationId(payload), Errors.INVALID_REQUEST), b -> {});
        assertThat(hexOf(answer)).isEqualTo("0000000c000000010002000300000000");
    }
}
