package io.stellflow.protocol.message;

import static io.stellflow.protocol.support.Bufs.hexOf;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.support.Bufs;
import io.stellflow.testsupport.GoldenVectors;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link FetchResponseEncoder} against the golden frames ({@code docs/spec/wire-protocol.md} §10's
 * G7 for v0, {@link FetchResponseV1Test#G8} for v1), written both ways a broker does it: copy mode
 * (the batches in the same buffer) and zero-copy (only the encoder's bytes in a head buffer,
 * batches beside it as "regions", here spliced back in the order the broker writes them); against
 * the reference codecs {@link FetchResponse} and {@link FetchResponseV1} for seeded random
 * responses; against {@link FetchResponseLayout#validate}; and for allocation.
 */
class FetchResponseEncoderTest {
    /**
     * {@code docs/spec/wire-protocol.md} §10 G7: the Fetch v0 response to G4 (correlationId 3),
     * batches at 100 and 101.
     */
    static final String G7 = GoldenVectors.G7;

    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    /**
     * A head buffer and the "regions" spliced into it, as the broker's FetchResponseFrame: on the
     * wire, head[0, cut0) region0 head[cut0, cut1) region1 ... head[cutN-1, end).
     */
    private static final class SplicedFrame {
        final ByteBuf head;
        final List<Integer> cuts = new ArrayList<>();
        final List<ByteBuf> regions = new ArrayList<>();

        SplicedFrame(ByteBuf head) {
            this.head = head;
        }

        void addRegion(ByteBuf bytes) {
            cuts.add(head.writerIndex());
            regions.add(bytes);
        }

        long regionBytes() {
            return regions.stream().mapToLong(ByteBuf::readableBytes).sum();
        }

        /** The wire bytes, with the frame length sealed as the broker does. */
        ByteBuf wire(ByteBuf into) {
            head.setInt(0, (int) (head.writerIndex() - Frames.LENGTH_FIELD_SIZE + regionBytes()));
            int from = 0;
            for (int i = 0; i < regions.size(); i++) {
                into.writeBytes(head, from, cuts.get(i) - from);
                into.writeBytes(
                        regions.get(i),
                        regions.get(i).readerIndex(),
                        regions.get(i).readableBytes());
                from = cuts.get(i);
            }
            into.writeBytes(head, from, head.writerIndex() - from);
            return into;
        }
    }

    /** The G7/G8 batches as stored in a segment based at 100: baseOffsetDelta 0 and 1, epoch 3. */
    private ByteBuf storedBatch(int storedDelta) {
        return bufs.hex(FetchResponseV1Test.storedG2(storedDelta));
    }

    private ByteBuf startFrame(ByteBuf out) {
        Frames.beginFrame(out);
        ResponseHeader.of(3, Errors.NONE).write(out);
        return out;
    }

    @Test
    void v0CopyModeWritesG7ByteForByte() {
        // Stored in a segment based at 0, the batches carry deltas 100 and 101; v0 rewrites them.
        ByteBuf out = startFrame(bufs.heap());
        FetchResponseEncoder encoder = new FetchResponseEncoder().wrap(out, FetchResponseLayout.VERSION_0, 1);
        encoder.topic("orders", 1);
        encoder.partition(0, Errors.NONE, 102, 0, 102);
        assertThat(encoder.recordsStart()).isEqualTo(out.writerIndex());
        int records = out.writerIndex();
        for (int i = 0; i < 2; i++) {
            int at = out.writerIndex();
            ByteBuf stored = storedBatch(100 + i);
            out.writeBytes(stored, stored.readerIndex(), stored.readableBytes());
            encoder.v0RewriteBatchPrefix(at, 100 + i, 100);
        }
        encoder.recordsLength(out.writerIndex() - records);
        Frames.endFrame(out, 0);
        assertThat(hexOf(out)).isEqualTo(G7);
    }

    @Test
    void v0ZeroCopyWritesG7WithAPrefixBesideEachRegion() {
        SplicedFrame frame = new SplicedFrame(startFrame(bufs.heap()));
        FetchResponseEncoder encoder = new FetchResponseEncoder().wrap(frame.head, FetchResponseLayout.VERSION_0, 1);
        encoder.topic("orders", 1);
        encoder.partition(0, Errors.NONE, 102, 0, 102);
        int bytes = 0;
        for (int i = 0; i < 2; i++) {
            ByteBuf stored = storedBatch(100 + i);
            encoder.v0BatchPrefix(100 + i, 100);
            frame.addRegion(stored.slice(
                    FetchResponseLayout.V0_BATCH_PREFIX_BYTES,
                    stored.readableBytes() - FetchResponseLayout.V0_BATCH_PREFIX_BYTES));
            bytes += stored.readableBytes();
        }
        encoder.recordsLength(bytes);
        // Head: length, header, body fields and two 4-byte prefixes; nothing of the log data.
        assertThat(frame.head.readableBytes())
                .isEqualTo(4 + 12 + 8 + 12 + FetchResponseLayout.V0_PARTITION_ENVELOPE_BYTES + 2 * 4);
        assertThat(hexOf(frame.wire(bufs.heap()))).isEqualTo(G7);
    }

    @Test
    void aV2RequestIsAnsweredInTheV1LayoutByteForByte() {
        ByteBuf copy = startFrame(bufs.heap());
        FetchResponseEncoder encoder = new FetchResponseEncoder().wrap(copy, FetchResponseLayout.VERSION_2, 1);
        assertThat(encoder.version()).isEqualTo(FetchResponseLayout.VERSION_1);
        encoder.topic("orders", 1);
        encoder.partition(0, Errors.NONE, 102, 0, 102);
        ByteBuf both = bufs.hex(FetchResponseV1Test.storedG2(0) + FetchResponseV1Test.storedG2(1));
        copy.writeBytes(both, both.readerIndex(), both.readableBytes());
        encoder.v1RecordsBaseOffset(100);
        encoder.recordsLength(both.readableBytes());
        Frames.endFrame(copy, 0);
        assertThat(hexOf(copy)).isEqualTo(FetchResponseV1Test.G8);
    }

    @Test
    void v1CopyAndZeroCopyWriteTheV1GoldenByteForByte() {
        ByteBuf copy = startFrame(bufs.heap());
        FetchResponseEncoder encoder = new FetchResponseEncoder().wrap(copy, FetchResponseLayout.VERSION_1, 1);
        encoder.topic("orders", 1);
        encoder.partition(0, Errors.NONE, 102, 0, 102);
        int records = copy.writerIndex();
        for (int i = 0; i < 2; i++) {
            ByteBuf stored = storedBatch(i);
            copy.writeBytes(stored, stored.readerIndex(), stored.readableBytes());
        }
        encoder.v1RecordsBaseOffset(
                FetchResponseLayout.v1RecordsBaseOffset(100, RecordBatchLayout.baseOffsetDelta(copy, records)));
        encoder.recordsLength(copy.writerIndex() - records);
        Frames.endFrame(copy, 0);
        assertThat(hexOf(copy)).isEqualTo(FetchResponseV1Test.G8);

        SplicedFrame frame = new SplicedFrame(startFrame(bufs.heap()));
        encoder.wrap(frame.head, FetchResponseLayout.VERSION_1, 1);
        encoder.topic("orders", 1);
        encoder.partition(0, Errors.NONE, 102, 0, 102);
        ByteBuf both = bufs.hex(FetchResponseV1Test.storedG2(0) + FetchResponseV1Test.storedG2(1));
        frame.addRegion(both); // one region for the partition, stored bytes untouched
        encoder.v1RecordsBaseOffset(100);
        encoder.recordsLength(both.readableBytes());
        assertThat(frame.head.readableBytes())
                .isEqualTo(4 + 12 + 8 + 12 + FetchResponseLayout.V1_PARTITION_ENVELOPE_BYTES);
        assertThat(hexOf(frame.wire(bufs.heap()))).isEqualTo(FetchResponseV1Test.G8);
    }

    @Test
    void theGoldenFramesPassTheLayoutValidator() {
        for (String hex : List.of(G7, FetchResponseV1Test.G8)) {
            ByteBuf body = bufs.hex(hex);
            body.skipBytes(Frames.LENGTH_FIELD_SIZE + ResponseHeader.SIZE);
            short version = hex.equals(G7) ? FetchResponseLayout.VERSION_0 : FetchResponseLayout.VERSION_1;
            assertThat(FetchResponseLayout.validate(body, version)).isEqualTo(1);
            assertThat(body.readerIndex()).isEqualTo(Frames.LENGTH_FIELD_SIZE + ResponseHeader.SIZE);
        }
    }

    @Test
    void theValidatorRejectsWhatTheLayoutForbids() {
        ByteBuf g8 = bufs.hex(FetchResponseV1Test.G8);
        int body = Frames.LENGTH_FIELD_SIZE + ResponseHeader.SIZE;
        int entry = body + FetchResponseLayout.BODY_HEADER_BYTES + FetchResponseLayout.topicHeaderBytes("orders");
        // Trailing byte, cut batch, recordsBaseOffset -1 with records, records without base offset.
        ByteBuf trailing =
                bufs.heap().writeBytes(g8, body, g8.readableBytes() - body).writeByte(0);
        ByteBuf cut = bufs.heap().writeBytes(g8, body, g8.readableBytes() - body - 1);
        cut.setInt(entry - body + FetchResponseLayout.V1_RECORDS_LENGTH_OFFSET, 287);
        ByteBuf noBase = bufs.heap().writeBytes(g8, body, g8.readableBytes() - body);
        noBase.setLong(entry - body + FetchResponseLayout.V1_RECORDS_BASE_OFFSET_OFFSET, -1L);
        for (ByteBuf bad : List.of(trailing, cut, noBase)) {
            assertProtocolError(
                    () -> FetchResponseLayout.validate(bad, FetchResponseLayout.VERSION_1), Errors.INVALID_REQUEST);
        }
        ByteBuf v0Empty = bufs.heap();
        new FetchResponseEncoder()
                .wrap(v0Empty, FetchResponseLayout.VERSION_0, 1)
                .topic("t", 1);
        assertProtocolError(
                () -> FetchResponseLayout.validate(v0Empty, FetchResponseLayout.VERSION_0), Errors.INVALID_REQUEST);
    }

    @Test
    void errorEntriesMatchTheReferenceCodecsAndAFailedPartitionDropsItsRecords() {
        for (short version : new short[] {FetchResponseLayout.VERSION_0, FetchResponseLayout.VERSION_1}) {
            ByteBuf out = bufs.heap();
            FetchResponseEncoder encoder = new FetchResponseEncoder().wrap(out, version, 1);
            encoder.topic("t", 3);
            encoder.partition(0, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1);
            encoder.partition(1, Errors.OFFSET_OUT_OF_RANGE, 10, 2, 10);
            encoder.partition(2, Errors.NONE, 10, 2, 10);
            int recordsStart = encoder.recordsStart();
            ByteBuf batch = batch(4, 3);
            out.writeBytes(batch, batch.readerIndex(), batch.readableBytes());
            if (version == FetchResponseLayout.VERSION_1) {
                encoder.v1RecordsBaseOffset(4);
            } else {
                encoder.v0RewriteBatchPrefix(recordsStart, 4, 4);
            }
            encoder.recordsLength(batch.readableBytes());
            // A read failure: the caller drops the records, the encoder makes it an error entry.
            assertThatThrownBy(() -> encoder.failPartition(Errors.BROKER_NOT_AVAILABLE))
                    .isInstanceOf(IllegalStateException.class);
            out.writerIndex(recordsStart);
            encoder.failPartition(Errors.BROKER_NOT_AVAILABLE);
            assertThat(FetchResponseLayout.validate(out, version)).isEqualTo(3);
            ByteBuf expected = bufs.heap();
            if (version == FetchResponseLayout.VERSION_0) {
                new FetchResponse(
                                0,
                                List.of(new FetchResponse.FetchableTopicResponse(
                                        "t",
                                        List.of(
                                                new FetchResponse.PartitionData(
                                                        0,
                                                        Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                                        -1,
                                                        -1,
                                                        -1,
                                                        List.of(),
                                                        null),
                                                new FetchResponse.PartitionData(
                                                        1, Errors.OFFSET_OUT_OF_RANGE, 10, 2, 10, List.of(), null),
                                                new FetchResponse.PartitionData(
                                                        2, Errors.BROKER_NOT_AVAILABLE, 10, 2, 10, List.of(), null)))))
                        .write(expected);
            } else {
                new FetchResponseV1(
                                0,
                                List.of(new FetchResponseV1.Topic(
                                        "t",
                                        List.of(
                                                new FetchResponseV1.PartitionData(
                                                        0,
                                                        Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                                        -1,
                                                        -1,
                                                        -1,
                                                        List.of(),
                                                        -1,
                                                        null),
                                                new FetchResponseV1.PartitionData(
                                                        1, Errors.OFFSET_OUT_OF_RANGE, 10, 2, 10, List.of(), -1, null),
                                                new FetchResponseV1.PartitionData(
                                                        2,
                                                        Errors.BROKER_NOT_AVAILABLE,
                                                        10,
                                                        2,
                                                        10,
                                                        List.of(),
                                                        -1,
                                                        null)))))
                        .write(expected);
            }
            assertThat(hexOf(out)).as("v%d", version).isEqualTo(hexOf(expected));
        }
    }

    @Test
    void fieldsOfTheOtherVersionAreRefused() {
        FetchResponseEncoder encoder = new FetchResponseEncoder();
        assertThatThrownBy(() -> encoder.wrap(bufs.heap(), (short) 3, 1)).isInstanceOf(IllegalArgumentException.class);
        encoder.wrap(bufs.heap(), FetchResponseLayout.VERSION_0, 1);
        assertThatThrownBy(encoder::recordsStart).isInstanceOf(IllegalStateException.class);
        encoder.topic("t", 1);
        encoder.partition(0, Errors.NONE, 0, 0, 0);
        assertThatThrownBy(() -> encoder.v1RecordsBaseOffset(0)).isInstanceOf(IllegalStateException.class);
        encoder.wrap(bufs.heap(), FetchResponseLayout.VERSION_1, 1);
        encoder.topic("t", 1);
        encoder.partition(0, Errors.NONE, 0, 0, 0);
        assertThatThrownBy(() -> encoder.v0BatchPrefix(0, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> encoder.v0RewriteBatchPrefix(0, 0, 0)).isInstanceOf(IllegalStateException.class);
    }

    /** A batch of {@code records} one-byte records stored with base offset {@code baseOffset}. */
    private ByteBuf batch(long baseOffset, int records) {
        ByteBuf buf = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(buf, 1_000L);
        for (int i = 0; i < records; i++) {
            b.append(1_000L + i, null, new byte[] {(byte) i});
        }
        b.close();
        RecordBatchLayout.setBaseOffsetDelta(buf, 0, (int) baseOffset);
        return buf;
    }

    private record Part(
            int id,
            short errorCode,
            long hw,
            long logStart,
            long lso,
            long fetchOffset,
            List<ByteBuf> batches,
            List<Long> bases) {}

    /**
     * Seeded random responses (1-3 topics, 1-4 partitions each, some with errors, 0-4 batches
     * starting at or before the fetch offset) encoded in both versions and both modes: the copy and
     * the spliced zero-copy bytes are identical, pass the validator, and decode with the reference
     * codecs to the same fields and to records at the stored offsets.
     */
    @Test
    void randomResponsesDecodeWithTheReferenceCodecsToTheEncodedFieldsAndOffsets() {
        SplittableRandom random = new SplittableRandom(18);
        for (int round = 0; round < 200; round++) {
            // Offsets in a segment are within 2^31 of its base offset (stored deltas are int32).
            long segmentBase = random.nextLong(0, 1L << 40);
            List<String> topics = new ArrayList<>();
            List<List<Part>> parts = new ArrayList<>();
            for (int t = random.nextInt(1, 4); t > 0; t--) {
                topics.add("topic-" + random.nextInt(1000) + "-ü");
                List<Part> ps = new ArrayList<>();
                for (int p = random.nextInt(1, 5); p > 0; p--) {
                    short code = random.nextInt(4) == 0 ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.NONE;
                    long next = segmentBase + random.nextInt(1 << 20);
                    long fetchOffset = next + random.nextInt(3);
                    List<ByteBuf> batches = new ArrayList<>();
                    List<Long> bases = new ArrayList<>();
                    for (int b = code == Errors.NONE ? random.nextInt(5) : 0; b > 0; b--) {
                        int n = random.nextInt(1, 4);
                        bases.add(next);
                        batches.add(batch(next, n));
                        next += n;
                    }
                    ps.add(new Part(ps.size(), code, next, 0, next, fetchOffset, batches, bases));
                }
                parts.add(ps);
            }
            for (short version : new short[] {FetchResponseLayout.VERSION_0, FetchResponseLayout.VERSION_1}) {
                ByteBuf copy = encode(topics, parts, version, segmentBase, null);
                SplicedFrame spliced = new SplicedFrame(bufs.heap().writeInt(0));
                encode(topics, parts, version, segmentBase, spliced);
                ByteBuf wire = spliced.wire(bufs.heap()).skipBytes(Frames.LENGTH_FIELD_SIZE);
                assertThat(hexOf(wire)).isEqualTo(hexOf(copy));
                int total = parts.stream().mapToInt(List::size).sum();
                assertThat(FetchResponseLayout.validate(copy, version)).isEqualTo(total);
                checkDecoded(copy, version, topics, parts);
            }
        }
    }

    /** Encodes the body into a new buffer (copy mode), or into {@code spliced}'s head (zero-copy). */
    private ByteBuf encode(
            List<String> topics, List<List<Part>> parts, short version, long segmentBase, SplicedFrame spliced) {
        ByteBuf out = spliced != null ? spliced.head : bufs.heap();
        FetchResponseEncoder encoder = new FetchResponseEncoder().wrap(out, version, topics.size());
        for (int t = 0; t < topics.size(); t++) {
            encoder.topic(topics.get(t), parts.get(t).size());
            for (Part p : parts.get(t)) {
                encoder.partition(p.id(), p.errorCode(), p.hw(), p.logStart(), p.lso());
                if (p.batches().isEmpty()) {
                    continue;
                }
                int bytes = 0;
                for (int b = 0; b < p.batches().size(); b++) {
                    // Stored in a segment: bytes 0-3 count from the segment's base offset.
                    ByteBuf stored = p.batches().get(b).duplicate();
                    long base = p.bases().get(b);
                    ByteBuf storedCopy = bufs.heap().writeBytes(stored);
                    RecordBatchLayout.setBaseOffsetDelta(storedCopy, 0, (int) (base - segmentBase));
                    bytes += storedCopy.readableBytes();
                    if (version == FetchResponseLayout.VERSION_1) {
                        if (spliced != null) {
                            spliced.addRegion(storedCopy);
                        } else {
                            out.writeBytes(storedCopy);
                        }
                    } else if (spliced != null) {
                        encoder.v0BatchPrefix(base, p.fetchOffset());
                        spliced.addRegion(storedCopy.skipBytes(FetchResponseLayout.V0_BATCH_PREFIX_BYTES));
                    } else {
                        int at = out.writerIndex();
                        out.writeBytes(storedCopy);
                        encoder.v0RewriteBatchPrefix(at, base, p.fetchOffset());
                    }
                }
                if (version == FetchResponseLayout.VERSION_1) {
                    encoder.v1RecordsBaseOffset(segmentBase);
                }
                encoder.recordsLength(bytes);
            }
        }
        return out;
    }

    private static void checkDecoded(ByteBuf body, short version, List<String> topics, List<List<Part>> parts) {
        List<String> decodedTopics = new ArrayList<>();
        List<long[]> fields = new ArrayList<>();
        List<List<Long>> offsets = new ArrayList<>();
        if (version == FetchResponseLayout.VERSION_0) {
            for (FetchResponse.FetchableTopicResponse t :
                    FetchResponse.read(body.duplicate()).responses()) {
                decodedTopics.add(t.topic());
                for (int i = 0; i < t.partitions().size(); i++) {
                    FetchResponse.PartitionData d = t.partitions().get(i);
                    fields.add(new long[] {
                        d.partition(),
                        d.errorCode(),
                        d.highWatermark(),
                        d.logStartOffset(),
                        d.lastStableOffset(),
                        d.abortedTransactions().size()
                    });
                    long fetchOffset =
                            parts.get(decodedTopics.size() - 1).get(i).fetchOffset();
                    offsets.add(RecordBatchReader.decode(d.records(), fetchOffset).stream()
                            .map(DecodedRecord::offset)
                            .toList());
                }
            }
        } else {
            for (FetchResponseV1.Topic t :
                    FetchResponseV1.read(body.duplicate()).responses()) {
                decodedTopics.add(t.topic());
                for (FetchResponseV1.PartitionData d : t.partitions()) {
                    fields.add(new long[] {
                        d.partition(),
                        d.errorCode(),
                        d.highWatermark(),
                        d.logStartOffset(),
                        d.lastStableOffset(),
                        d.abortedTransactions().size()
                    });
                    offsets.add(RecordBatchReader.decode(d.records(), d.recordsBaseOffset()).stream()
                            .map(DecodedRecord::offset)
                            .toList());
                }
            }
        }
        assertThat(decodedTopics).isEqualTo(topics);
        int i = 0;
        for (List<Part> ps : parts) {
            for (Part p : ps) {
                assertThat(fields.get(i)).containsExactly(p.id(), p.errorCode(), p.hw(), p.logStart(), p.lso(), 0);
                List<Long> expected = new ArrayList<>();
                for (int b = 0; b < p.bases().size(); b++) {
                    int n = RecordBatchLayout.lastOffsetDelta(p.batches().get(b), 0) + 1;
                    for (int r = 0; r < n; r++) {
                        expected.add(p.bases().get(b) + r);
                    }
                }
                assertThat(offsets.get(i)).as("partition %d offsets", i).isEqualTo(expected);
                i++;
            }
        }
    }

    /**
     * The hot path allocates nothing per partition or batch: 100,000 partition entries with a v0
     * prefix and a records length each, into a reused heap buffer (no leak-detector wrapper), on
     * this thread's allocation counter after a warm-up. Below one byte per entry on average allows
     * for a stray allocation by the runtime, not for one per entry (a boxed long alone is 16 bytes).
     */
    @Test
    void encodingAllocatesNothingPerPartitionOrBatch() {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ByteBuf out = Unpooled.wrappedBuffer(new byte[1 << 20]);
        FetchResponseEncoder encoder = new FetchResponseEncoder();
        String topic = "orders";
        int entries = 100_000;
        long sink = 0;
        for (int round = 0; round < 3; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < entries; i += 1_000) {
                out.clear();
                encoder.wrap(out, FetchResponseLayout.VERSION_0, 1);
                encoder.topic(topic, 1_000);
                for (int p = 0; p < 1_000; p++) {
                    encoder.partition(p, Errors.NONE, 1_000 + p, 0, 1_000 + p);
                    encoder.v0BatchPrefix(990 + p, 995);
                    encoder.recordsLength(64);
                }
                sink += out.writerIndex();
            }
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            if (round == 2) {
                assertThat(allocated)
                        .as("bytes allocated for %d entries", entries)
                        .isLessThan(entries);
            }
        }
        assertThat(sink).isPositive();
        out.release();
    }
}
