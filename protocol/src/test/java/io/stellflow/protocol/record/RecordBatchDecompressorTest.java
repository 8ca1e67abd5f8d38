package io.stellflow.protocol.record;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link BatchCompression} and {@link RecordBatchDecompressor} through {@link
 * RecordBatchReader}: every codec round-trips a batch of JSON-like lines with the header fields kept,
 * the codec in attributes bits 0-2 and a CRC-32C over the compressed bytes; damaged, over-cap and
 * undecodable batches fail with a code and a message naming the batch's offset.
 */
class RecordBatchDecompressorTest {
    private static final long TS = 1_700_000_000_000L;
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    /** JSON-like lines from a fixed seed: repetitive field names, varying values (compressible). */
    private static byte[] line(SplittableRandom r, int i) {
        String[] levels = {"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"};
        return ("{\"ts\":" + (TS + i) + ",\"level\":\"" + levels[r.nextInt(levels.length)]
                        + "\",\"service\":\"checkout-" + r.nextInt(12) + "\",\"trace\":\""
                        + Long.toHexString(r.nextLong())
                        + "\",\"msg\":\"request served in " + r.nextInt(2000) + " ms\",\"user\":" + r.nextInt(500)
                        + "}")
                .getBytes(UTF_8);
    }

    private ByteBuf plainBatch(int records, long seed) {
        ByteBuf out = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < records; i++) {
            b.append(TS + i, i % 3 == 0 ? null : ("k" + i).getBytes(UTF_8), line(r, i));
        }
        b.close();
        return out;
    }

    private ByteBuf compressed(ByteBuf plain, CompressionType type) {
        ByteBuf out = bufs.direct();
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            int n = BatchCompression.compress(plain, plain.readerIndex(), codec, out);
            assertThat(n).isEqualTo(out.readableBytes());
        }
        return out;
    }

    private static void assertSameRecords(ByteBuf expected, ByteBuf actual, RecordBatchDecompressor d) {
        List<DecodedRecord> want = RecordBatchReader.decode(expected, 100);
        List<DecodedRecord> got = new java.util.ArrayList<>();
        RecordBatchReader.decode(actual, 100, true, d, (o, ts, k, v, h) -> got.add(new DecodedRecord(o, ts, k, v, h)));
        assertThat(got).usingRecursiveFieldByFieldElementComparator().isEqualTo(want);
    }

    @Test
    void theListenerHearsOfEachExpandedBatchOnceWithItsRecordsSectionSizesAndNotOfAFailedOne() {
        ByteBuf plain = plainBatch(200, 7);
        ByteBuf zipped = compressed(plain, CompressionType.ZSTD);
        List<long[]> heard = new java.util.ArrayList<>();
        List<CompressionType> types = new java.util.ArrayList<>();
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20, (type, c, u, ns) -> {
            types.add(type);
            heard.add(new long[] {c, u, ns});
        })) {
            assertSameRecords(plain, zipped, d);
            assertThat(types).containsExactly(CompressionType.ZSTD);
            assertThat(heard.get(0)[0]).isEqualTo(zipped.readableBytes() - RecordBatchLayout.HEADER_SIZE);
            assertThat(heard.get(0)[1]).isEqualTo(plain.readableBytes() - RecordBatchLayout.HEADER_SIZE);
            assertThat(heard.get(0)[2]).isPositive();

            ByteBuf bad = bufs.heap();
            bad.writeBytes(zipped, 0, zipped.readableBytes());
            bad.setByte(RecordBatchLayout.RECORDS_OFFSET, bad.getByte(RecordBatchLayout.RECORDS_OFFSET) ^ 0x5a);
            assertThatThrownBy(() -> d.expand(bad, 0)).isInstanceOf(ProtocolException.class);
            assertThat(heard).hasSize(1);
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void everyCodecRoundTripsABatchWithItsHeaderKept(CompressionType type) {
        ByteBuf plain = plainBatch(200, 42);
        ByteBuf zipped = compressed(plain, type);

        assertThat(RecordBatchLayout.attributes(zipped, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                .isEqualTo(type.id());
        assertThat(RecordBatchLayout.batchSize(zipped, 0)).isEqualTo(zipped.readableBytes());
        assertThat(zipped.readableBytes()).isLessThan(plain.readableBytes() / 2);
        assertThat(RecordBatchLayout.crc(zipped, 0)).isEqualTo(RecordBatchLayout.computeCrc(zipped, 0));
        assertThat(RecordBatchLayout.recordCount(zipped, 0)).isEqualTo(200);
        assertThat(RecordBatchLayout.lastOffsetDelta(zipped, 0)).isEqualTo(199);
        assertThat(RecordBatchLayout.maxTimestamp(zipped, 0)).isEqualTo(TS + 199);
        assertThat(RecordBatchLayout.baseTimestamp(zipped, 0)).isEqualTo(TS);
        assertThat(plain.readerIndex()).isZero();

        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            assertSameRecords(plain, zipped, d);
            // A set of two compressed batches and a plain one between them, offsets continuing.
            ByteBuf set = mixedSet(type);
            List<Long> offsets = new java.util.ArrayList<>();
            RecordBatchReader.decode(set, 0, true, d, (o, ts, k, v, h) -> offsets.add(o));
            assertThat(offsets).hasSize(600);
            assertThat(offsets.get(599)).isEqualTo(599L);
            assertThat(offsets).isSorted().doesNotHaveDuplicates();
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aDamagedStreamWithARepairedCrcIsCorruptMessageNamingTheOffset(CompressionType type) {
        ByteBuf zipped = compressed(plainBatch(50, 7), type);
        int streamStart = RecordBatchLayout.RECORDS_OFFSET;
        // Cut the stream short (a truncated container), then repair the CRC so only the codec sees it.
        ByteBuf cut = bufs.heap();
        cut.writeBytes(zipped, 0, zipped.readableBytes() - 9);
        cut.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, cut.readableBytes() - RecordBatchLayout.LOG_OVERHEAD);
        cut.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(cut, 0));
        assertThat(cut.readableBytes()).isGreaterThan(streamStart);
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            assertThatThrownBy(() -> RecordBatchReader.decode(cut, 500, true, d, (o, ts, k, v, h) -> {}))
                    .isInstanceOfSatisfying(
                            ProtocolException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE))
                    .hasMessageStartingWith(
                            "compressed batch at offset 500: " + type.configName() + " stream is malformed");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aBatchOverTheCapIsRefusedAndTheNextOneStillDecodes(CompressionType type) {
        ByteBuf plain = plainBatch(300, 3);
        ByteBuf zipped = compressed(plain, type);
        int recordsBytes = plain.readableBytes() - RecordBatchLayout.RECORDS_OFFSET;
        try (RecordBatchDecompressor tight = new RecordBatchDecompressor(recordsBytes - 1)) {
            assertThatThrownBy(() -> RecordBatchReader.decode(zipped, 0, true, tight, (o, ts, k, v, h) -> {}))
                    .isInstanceOfSatisfying(
                            ProtocolException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.INVALID_RECORD))
                    .hasMessage("compressed batch at offset 0: " + type.configName()
                            + " stream decompresses to more than " + (recordsBytes - 1) + " bytes");
        }
        try (RecordBatchDecompressor exact = new RecordBatchDecompressor(recordsBytes)) {
            assertSameRecords(plain, zipped, exact);
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aFlippedByteIsCorruptMessageUnlessCrcsAreNotChecked(CompressionType type) {
        ByteBuf zipped = compressed(plainBatch(20, 11), type);
        int last = zipped.writerIndex() - 1;
        zipped.setByte(last, zipped.getByte(last) ^ 0x5a);
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            assertThatThrownBy(() -> RecordBatchReader.decode(zipped, 9, true, d, (o, ts, k, v, h) -> {}))
                    .isInstanceOfSatisfying(
                            ProtocolException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE))
                    .hasMessage("invalid compressed batch at offset 9: CORRUPT_MESSAGE");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void withoutADecompressorACompressedBatchIsFeatureNotEnabled(CompressionType type) {
        ByteBuf zipped = compressed(plainBatch(5, 1), type);
        assertThatThrownBy(() -> RecordBatchReader.decode(zipped, 0))
                .isInstanceOfSatisfying(
                        ProtocolException.class, e -> assertThat(e.errorCode()).isEqualTo(Errors.FEATURE_NOT_ENABLED));
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void compressedRecordsThatBreakARecordRuleAreInvalidRecord(CompressionType type) {
        ByteBuf zipped = compressed(batchCountingOneRecordTooMany(), type);
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            assertThatThrownBy(() -> RecordBatchReader.decode(zipped, 40, true, d, (o, ts, k, v, h) -> {}))
                    .isInstanceOfSatisfying(
                            ProtocolException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.INVALID_RECORD))
                    .hasMessage("compressed batch at offset 40 holds invalid records: INVALID_RECORD");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void compressingACompressedBatchIsRefused(CompressionType type) {
        ByteBuf zipped = compressed(plainBatch(5, 1), type);
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            assertThatThrownBy(() -> BatchCompression.compress(zipped, 0, codec, bufs.heap()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("already compressed");
        }
    }

    @org.junit.jupiter.api.Test
    void theExpansionBufferIsReusedAcrossBatchesAndCodecs() {
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            ByteBuf first = d.expand(compressed(plainBatch(100, 1), CompressionType.LZ4), 0);
            ByteBuf second = d.expand(compressed(plainBatch(100, 2), CompressionType.ZSTD), 0);
            assertThat(second).isSameAs(first);
            assertThat(RecordBatchLayout.attributes(second, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                    .isZero();
            assertThat(RecordBatchLayout.batchSize(second, 0)).isEqualTo(second.readableBytes());
        }
    }

    /**
     * A plain batch of 10 records whose header counts 11 (its CRC-32C, not rewritten here, no longer
     * matches): the walk over its records runs out of bytes.
     */
    private ByteBuf batchCountingOneRecordTooMany() {
        ByteBuf plain = plainBatch(10, 5);
        plain.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, 11);
        plain.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, 10);
        return plain;
    }

    /** A compressed batch, a plain one and a compressed one, offsets continuing (0..599). */
    private ByteBuf mixedSet(CompressionType type) {
        ByteBuf plain = plainBatch(200, 42);
        ByteBuf zipped = compressed(plain, type);
        ByteBuf set = bufs.heap();
        set.writeBytes(zipped, 0, zipped.readableBytes());
        int second = set.writerIndex();
        set.writeBytes(plain, 0, plain.readableBytes());
        RecordBatchLayout.setBaseOffsetDelta(set, second, 200);
        int third = set.writerIndex();
        set.writeBytes(zipped, 0, zipped.readableBytes());
        RecordBatchLayout.setBaseOffsetDelta(set, third, 400);
        return set;
    }

    private static List<DecodedRecord> decodeAll(ByteBuf set, boolean checkCrc, RecordBatchDecompressor d) {
        List<DecodedRecord> got = new java.util.ArrayList<>();
        RecordBatchReader.decode(set, 7, checkCrc, d, (o, ts, k, v, h) -> got.add(new DecodedRecord(o, ts, k, v, h)));
        return got;
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void expandAllGivesAnUncompressedSetThatDecodesToTheSameRecords(CompressionType type) {
        ByteBuf set = mixedSet(type);
        int readerBefore = set.readerIndex();
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            ByteBuf out = bufs.heap();
            out.writeBytes(new byte[] {1, 2, 3}); // appended after what is there
            int n = d.expandAll(set, true, 1 << 24, out);
            assertThat(n).isEqualTo(out.writerIndex() - 3);
            assertThat(RecordBatchDecompressor.firstBatchCodec(set)).isEqualTo(type);
            ByteBuf expanded = out.slice(3, n);
            assertThat(RecordBatchDecompressor.firstBatchCodec(expanded)).isEqualTo(CompressionType.NONE);
            assertThat(RecordBatchValidator.batchCount(expanded)).isEqualTo(3);
            // The reader decodes it with its CRC check off (the expanded batches' CRC field is 0),
            // or without validating it again (decodeExpanded: expandAll checked every batch).
            List<DecodedRecord> lazily = decodeAll(set, true, d);
            assertThat(decodeAll(expanded, false, null))
                    .usingRecursiveFieldByFieldElementComparator()
                    .isEqualTo(lazily)
                    .hasSize(600);
            List<DecodedRecord> unchecked = new java.util.ArrayList<>();
            RecordBatchReader.decodeExpanded(
                    expanded, 7, null, (o, ts, k, v, h) -> unchecked.add(new DecodedRecord(o, ts, k, v, h)));
            assertThat(unchecked).usingRecursiveFieldByFieldElementComparator().isEqualTo(lazily);
            // A read_committed gate sees the same batches: skip the second (base 207), stop at the
            // third (407); or skip the first and deliver the rest.
            RecordBatchReader.BatchGate skipThenStop = (pid, base, last) -> base == 207
                    ? RecordBatchReader.BatchGate.SKIP
                    : base >= 407 ? RecordBatchReader.BatchGate.STOP : RecordBatchReader.BatchGate.DELIVER;
            RecordBatchReader.BatchGate skipFirst = (pid, base, last) ->
                    base == 7 ? RecordBatchReader.BatchGate.SKIP : RecordBatchReader.BatchGate.DELIVER;
            for (RecordBatchReader.BatchGate gate : List.of(skipThenStop, skipFirst)) {
                List<DecodedRecord> gatedLazily = new java.util.ArrayList<>();
                RecordBatchReader.decode(
                        set, 7, true, d, gate, (o, ts, k, v, h) -> gatedLazily.add(new DecodedRecord(o, ts, k, v, h)));
                List<DecodedRecord> gatedExpanded = new java.util.ArrayList<>();
                RecordBatchReader.decodeExpanded(
                        expanded, 7, gate, (o, ts, k, v, h) -> gatedExpanded.add(new DecodedRecord(o, ts, k, v, h)));
                assertThat(gatedExpanded)
                        .usingRecursiveFieldByFieldElementComparator()
                        .isEqualTo(gatedLazily)
                        .hasSize(gate == skipFirst ? 400 : 200);
            }
            assertThat(set.readerIndex()).isEqualTo(readerBefore);
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void expandAllGivesUpWithoutThrowingAndLeavesTheOutputAsItWas(CompressionType type) {
        ByteBuf set = mixedSet(type);
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            ByteBuf out = bufs.heap();
            out.writeByte(9);
            int full = d.expandAll(set, true, 1 << 24, bufs.heap());
            // over the set bound, by one byte
            assertThat(d.expandAll(set, true, full - 1, out)).isEqualTo(-1);
            assertThat(out.writerIndex()).isEqualTo(1);
            assertThat(d.expandAll(set, true, full, out)).isEqualTo(full);
            out.writerIndex(1);
            // a flipped byte in the last batch's stream: -1 with CRCs checked
            ByteBuf damaged = bufs.heap();
            damaged.writeBytes(set, 0, set.readableBytes());
            int last = damaged.writerIndex() - 1;
            damaged.setByte(last, damaged.getByte(last) ^ 0x5a);
            assertThat(d.expandAll(damaged, true, 1 << 24, out)).isEqualTo(-1);
            assertThat(out.writerIndex()).isEqualTo(1);
            // a truncated set (the last batch cut): -1 as well
            ByteBuf cut = damaged.slice(0, damaged.readableBytes() - 5);
            assertThat(d.expandAll(cut, false, 1 << 24, out)).isEqualTo(-1);
            assertThat(out.writerIndex()).isEqualTo(1);
        }
        try (RecordBatchDecompressor tight = new RecordBatchDecompressor(100)) {
            ByteBuf out = bufs.heap();
            assertThat(tight.expandAll(set, true, 1 << 24, out)).isEqualTo(-1); // a batch over its cap
            assertThat(out.writerIndex()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void expandAllGivesUpOnABatchWhoseRecordsBreakARecordRule(CompressionType type) {
        // CRCs right: only the walk over the records finds it.
        ByteBuf bad = batchCountingOneRecordTooMany();
        RecordBatchLayout.setProducerFields(bad, 0, -1L, (short) -1, -1); // rewrites the CRC
        for (ByteBuf badBatch : List.of(compressed(bad, type), bad)) {
            ByteBuf set = mixedSet(type);
            int last = set.writerIndex();
            set.writeBytes(badBatch, 0, badBatch.readableBytes());
            RecordBatchLayout.setBaseOffsetDelta(set, last, 600);
            if (badBatch == bad) {
                RecordBatchLayout.setProducerFields(set, last, -1L, (short) -1, -1);
            }
            try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
                ByteBuf out = bufs.heap();
                out.writeByte(9);
                assertThat(d.expandAll(set, true, 1 << 24, out)).isEqualTo(-1);
                assertThat(out.writerIndex()).isEqualTo(1);
                // The reader, given the set as sent, names the error.
                assertThatThrownBy(() -> decodeAll(set, true, d))
                        .isInstanceOfSatisfying(
                                ProtocolException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.INVALID_RECORD));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void expandAllTellsTheListenerOfASetOnlyOnceItExpandedWhole(CompressionType type) {
        ByteBuf good = mixedSet(type); // compressed, plain, compressed
        int recordsSection = compressed(plainBatch(200, 42), type).readableBytes() - RecordBatchLayout.HEADER_SIZE;
        ByteBuf bad = batchCountingOneRecordTooMany();
        RecordBatchLayout.setProducerFields(bad, 0, -1L, (short) -1, -1); // rewrites the CRC
        ByteBuf badSet = bufs.heap();
        badSet.writeBytes(good, 0, good.readableBytes());
        int last = badSet.writerIndex();
        ByteBuf badZipped = compressed(bad, type);
        badSet.writeBytes(badZipped, 0, badZipped.readableBytes());
        RecordBatchLayout.setBaseOffsetDelta(badSet, last, 600);
        List<CompressionType> heard = new java.util.ArrayList<>();
        List<Long> compressedSizes = new java.util.ArrayList<>();
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20, (t, c, u, ns) -> {
            heard.add(t);
            compressedSizes.add(c);
        })) {
            assertThat(d.expandAll(good, true, 1 << 24, bufs.heap())).isPositive();
            assertThat(heard).containsExactly(type, type);
            assertThat(compressedSizes).containsExactly((long) recordsSection, (long) recordsSection);

            // Given up on at the last batch: none of the set's batches told, though two expanded.
            assertThat(d.expandAll(badSet, true, 1 << 24, bufs.heap())).isEqualTo(-1);
            assertThat(heard).hasSize(2);
            // The caller then decodes the set as sent: each compressed batch told once, by that decoding
            // (the bad one too: it decompressed before its records were found wrong).
            assertThatThrownBy(() -> decodeAll(badSet, true, d)).isInstanceOf(ProtocolException.class);
            assertThat(heard).hasSize(5);
        }
    }

    @Test
    void expandAllTellsTheListenerOfEveryBatchOfASetOfMoreBatchesThanItFirstHoldsFiguresFor() {
        int batches = 40; // the held figures start with room for 16 batches
        ByteBuf set = bufs.heap();
        List<Long> sizes = new java.util.ArrayList<>();
        for (int i = 0; i < batches; i++) {
            ByteBuf zipped = compressed(plainBatch(5 + i % 3, i), CompressionType.ZSTD);
            int at = set.writerIndex();
            set.writeBytes(zipped, 0, zipped.readableBytes());
            RecordBatchLayout.setBaseOffsetDelta(set, at, 10 * i);
            sizes.add((long) zipped.readableBytes() - RecordBatchLayout.HEADER_SIZE);
        }
        List<Long> heard = new java.util.ArrayList<>();
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20, (t, c, u, ns) -> heard.add(c))) {
            assertThat(d.expandAll(set, true, 1 << 24, bufs.heap())).isPositive();
            assertThat(heard).isEqualTo(sizes);
            assertThat(d.expandAll(set, true, 1 << 24, bufs.heap())).isPositive();
            assertThat(heard).hasSize(2 * batches);
        }
    }

    @Test
    void aPlainSetIsNotCompressedAndExpandsToACopy() {
        ByteBuf plain = plainBatch(10, 3);
        assertThat(RecordBatchDecompressor.firstBatchCodec(plain)).isEqualTo(CompressionType.NONE);
        // Only the first batch counts: a plain one ahead of a compressed one gives NONE.
        ByteBuf plainThenZipped = bufs.heap();
        plainThenZipped.writeBytes(plain, 0, plain.readableBytes());
        ByteBuf zipped = compressed(plainBatch(10, 4), CompressionType.ZSTD);
        plainThenZipped.writeBytes(zipped, 0, zipped.readableBytes());
        assertThat(RecordBatchDecompressor.firstBatchCodec(plainThenZipped)).isEqualTo(CompressionType.NONE);
        assertThat(RecordBatchDecompressor.firstBatchCodec(
                        plainThenZipped.slice(plain.readableBytes(), zipped.readableBytes())))
                .isEqualTo(CompressionType.ZSTD);
        assertThat(RecordBatchDecompressor.firstBatchCodec(bufs.heap())).isEqualTo(CompressionType.NONE);
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            ByteBuf out = bufs.heap();
            assertThat(d.expandAll(plain, true, 1 << 20, out)).isEqualTo(plain.readableBytes());
            assertThat(io.netty.buffer.ByteBufUtil.equals(out, plain)).isTrue();
        }
    }
}
