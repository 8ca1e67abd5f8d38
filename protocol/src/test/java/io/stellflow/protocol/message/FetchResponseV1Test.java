package io.stellflow.protocol.message;

import static io.stellflow.protocol.support.Bufs.hexOf;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.support.Bufs;
import io.stellflow.testsupport.GoldenVectors;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Fetch v1 response: byte-exact in both directions against a golden frame ({@code
 * docs/spec/wire-protocol.md} §10's G7 with {@code recordsBaseOffset} 100 inserted before the
 * records, which keep their stored deltas 0 and 1), offsets counted from recordsBaseOffset, strict
 * decoding.
 */
class FetchResponseV1Test {
    /** Response frame, correlationId 3: topic "orders" partition 0, HW 102, two stored G2 batches. */
    static final String G8 =
            "0000016e000000030002000000000000000000000000000100066f7264657273000000010000000000000000000000000066000000000000000000000000000000660000000000000000000000640000012000000000000000880000000301a99a047f00000000000000000196b37c740000000196b37c7400ffffffffffffffffffffffffffff0000000100000053000000000000000000000000000000000a6f726465722d313030310000000e7b22616d6f756e74223a3139397d00000001000c636f6e74656e742d74797065000000106170706c69636174696f6e2f6a736f6e00000001000000880000000301a99a047f00000000000000000196b37c740000000196b37c7400ffffffffffffffffffffffffffff0000000100000053000000000000000000000000000000000a6f726465722d313030310000000e7b22616d6f756e74223a3139397d00000001000c636f6e74656e742d74797065000000106170706c69636174696f6e2f6a736f6e";

    /**
     * The G2 batch of {@code docs/spec/wire-protocol.md} §7.8 (one record), stored:
     * baseOffsetDelta = delta, partitionLeaderEpoch 3.
     */
    static final String G2 = GoldenVectors.G2;

    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static String storedG2(int delta) {
        return GoldenVectors.storedG2(delta);
    }

    private FetchResponseV1 g8Response() {
        ByteBuf records = bufs.hex(storedG2(0) + storedG2(1));
        return new FetchResponseV1(
                0,
                List.of(new FetchResponseV1.Topic(
                        "orders",
                        List.of(new FetchResponseV1.PartitionData(
                                0, Errors.NONE, 102, 0, 102, List.of(), 100, records)))));
    }

    private ByteBuf payload(String hex) {
        ByteBuf frame = bufs.hex(hex);
        assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
        return frame;
    }

    @Test
    void encodesTheGoldenFrameByteForByte() {
        ByteBuf out = bufs.heap();
        int start = Frames.beginFrame(out);
        ResponseHeader.of(3, Errors.NONE).write(out);
        g8Response().write(out);
        Frames.endFrame(out, start);
        assertThat(hexOf(out)).isEqualTo(G8);
        assertThat(out.readableBytes()).isEqualTo(370);
    }

    @Test
    void decodesTheGoldenFrameToOffsets100And101FromRecordsBaseOffset() {
        ByteBuf payload = payload(G8);
        assertThat(ResponseHeader.read(payload).correlationId()).isEqualTo(3);
        FetchResponseV1 decoded = FetchResponseV1.read(payload);
        FetchResponseV1.PartitionData p =
                decoded.responses().get(0).partitions().get(0);
        assertThat(decoded.responses().get(0).topic()).isEqualTo("orders");
        assertThat(p.highWatermark()).isEqualTo(102);
        assertThat(p.recordsBaseOffset()).isEqualTo(100);
        assertThat(hexOf(p.records())).isEqualTo(storedG2(0) + storedG2(1));
        List<DecodedRecord> records = RecordBatchReader.decode(p.records(), p.recordsBaseOffset());
        assertThat(records).extracting(DecodedRecord::offset).containsExactly(100L, 101L);
        assertThat(RecordBatchReader.nextOffset(p.records(), p.recordsBaseOffset()))
                .isEqualTo(102L);
    }

    @Test
    void sinkDecodeSeesTheSameRecordsAsTheListDecode() {
        ByteBuf records = bufs.hex(storedG2(0) + storedG2(1));
        List<DecodedRecord> viaSink = new ArrayList<>();
        RecordBatchReader.decode(
                records,
                7,
                (offset, ts, key, value, headers) -> viaSink.add(new DecodedRecord(offset, ts, key, value, headers)));
        assertThat(viaSink).isEqualTo(RecordBatchReader.decode(records, 7));
        assertThat(viaSink).extracting(DecodedRecord::offset).containsExactly(7L, 8L);
    }

    @Test
    void nextOffsetIsMinusOneWithoutACompleteBatch() {
        ByteBuf full = bufs.hex(storedG2(0));
        assertThat(RecordBatchReader.nextOffset(full.slice(0, full.readableBytes() - 1), 0))
                .isEqualTo(-1L);
        assertThat(RecordBatchReader.nextOffset(bufs.heap(), 0)).isEqualTo(-1L);
        assertThat(RecordBatchReader.nextOffset(null, 0)).isEqualTo(-1L);
    }

    @Test
    void trailingBytesAndTruncationAreRejected() {
        for (String hex : List.of(G8 + "00", G8.substring(0, G8.length() - 2))) {
            ByteBuf frame = bufs.hex(hex);
            frame.skipBytes(Frames.LENGTH_FIELD_SIZE);
            ResponseHeader.read(frame);
            assertProtocolError(() -> FetchResponseV1.read(frame), Errors.INVALID_REQUEST);
        }
    }
}
