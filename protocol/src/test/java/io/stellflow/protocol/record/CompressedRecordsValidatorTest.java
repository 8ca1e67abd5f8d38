package io.stellflow.protocol.record;

import static io.stellflow.protocol.support.ZstdFrames.withDeclaredSize;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import io.stellflow.protocol.support.Bufs;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Step 7 of §7.7 on compressed batches (decision 9.o) through {@link RecordBatchValidator} with a
 * {@link CompressedRecordsValidator}: each codec, records that straddle the chunks, zstd's one-pass region, the cap
 * (bombs), malformed and truncated containers, wrong counts, and the same verdict as the
 * uncompressed walk for any one-byte change of the records.
 */
class CompressedRecordsValidatorTest {
    private static final int MAX_BATCH = 64 << 20;
    private static final long TS = 1_746_768_000_000L;
    private static final long CAP = 8 << 20;

    private final Bufs bufs = new Bufs();
    private final CompressedRecordsValidator validator = new CompressedRecordsValidator(CAP);
    private final BatchMaxTimestamps maxTimestamps = new BatchMaxTimestamps(4);

    @AfterEach
    @AfterProperty
    void close() {
        validator.close();
        bufs.close();
    }

    private ByteBuf batch(int n, int valueBytes) {
        ByteBuf out = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
        for (int i = 0; i < n; i++) {
            byte[] value = new byte[valueBytes];
            Arrays.fill(value, (byte) ('a' + i % 26));
            b.append(TS + i, ("k" + i).getBytes(UTF_8), value, List.of(new Header("h-" + i, "v".getBytes(UTF_8))));
        }
        b.close();
        return out;
    }

    /**
     * {@code n} records of about {@code valueBytes} of JSON-like text from a fixed seed: compresses
     * 3-6x like real log lines (the one-pass region asks for at most 64x), unlike {@link #batch}'s
     * runs of one letter.
     */
    private ByteBuf textBatch(int n, int valueBytes) {
        ByteBuf out = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
        SplittableRandom random = new SplittableRandom(17);
        for (int i = 0; i < n; i++) {
            StringBuilder v = new StringBuilder(valueBytes + 80);
            while (v.length() < valueBytes) {
                v.append("{\"user\":")
                        .append(random.nextInt(100_000))
                        .append(",\"ms\":")
                        .append(random.nextInt(5_000));
                v.append(",\"path\":\"/api/")
                        .append(Long.toHexString(random.nextLong()))
                        .append("\"}");
            }
            b.append(
                    TS + i,
                    ("k" + i).getBytes(UTF_8),
                    v.toString().getBytes(UTF_8),
                    List.of(new Header("h-" + i, "v".getBytes(UTF_8))));
        }
        b.close();
        return out;
    }

    private ByteBuf compress(ByteBuf batch, CompressionType type) {
        ByteBuf out = bufs.direct();
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            BatchCompression.compress(batch, 0, codec, out);
        }
        return out;
    }

    private short validate(ByteBuf set) {
        maxTimestamps.clear();
        return RecordBatchValidator.validate(set, MAX_BATCH, false, maxTimestamps, validator);
    }

    /** Rewrites the batch at 0 with the given compressed records section (length and CRC fixed). */
    private ByteBuf withSection(ByteBuf batch, byte[] section) {
        ByteBuf out = bufs.heap();
        out.writeBytes(batch, 0, RecordBatchLayout.RECORDS_OFFSET).writeBytes(section);
        out.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, out.writerIndex() - RecordBatchLayout.LOG_OVERHEAD);
        out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
        return out;
    }

    private static byte[] section(ByteBuf batch) {
        byte[] s = new byte[batch.writerIndex() - RecordBatchLayout.RECORDS_OFFSET];
        batch.getBytes(RecordBatchLayout.RECORDS_OFFSET, s);
        return s;
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void eachCodecsBatchIsValidAndGivesItsRealMaxTimestamp(CompressionType type) {
        ByteBuf plain = batch(50, 100);
        ByteBuf set = compress(plain, type);
        assertThat(RecordBatchLayout.attributes(set, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                .isEqualTo(type.id());
        assertThat(set.readableBytes()).isLessThan(plain.readableBytes());
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        assertThat(validator.outcome()).isEqualTo(CompressedRecordsValidator.VALID);
        assertThat(maxTimestamps.size()).isEqualTo(1);
        assertThat(maxTimestamps.get(0)).isEqualTo(TS + 49);
        assertThat(validator.lastDecompressedBytes())
                .isEqualTo(plain.readableBytes() - RecordBatchLayout.RECORDS_OFFSET);
        // Without a validator the broker's old answer stands: the codec is not enabled.
        assertThat(RecordBatchValidator.validate(set, MAX_BATCH)).isEqualTo(Errors.FEATURE_NOT_ENABLED);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void compressedAndPlainBatchesMixInOneSet(CompressionType type) {
        ByteBuf set = bufs.direct();
        set.writeBytes(batch(3, 10));
        set.writeBytes(compress(batch(4, 10), type));
        set.writeBytes(batch(1, 10));
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        assertThat(maxTimestamps.size()).isEqualTo(3);
        assertThat(validate(bufs.composite(set, 200))).isEqualTo(Errors.NONE);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void recordsAndHeaderKeysStraddlingChunksAreValid(CompressionType type) {
        ByteBuf plain = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(plain, TS);
        byte[] bigValue = new byte[200_000];
        Arrays.fill(bigValue, (byte) 'x');
        String longKey = "é".repeat(16_000); // 32,000 UTF-8 bytes
        for (int i = 0; i < 6; i++) {
            b.append(TS, null, bigValue, List.of(new Header(longKey, bigValue), new Header("k", null)));
        }
        b.close();
        assertThat(validate(compress(plain, type))).isEqualTo(Errors.NONE);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aBombOverTheCapIsInvalidRecord(CompressionType type) {
        ByteBuf plain = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(plain, TS);
        b.append(TS, null, new byte[(int) CAP + 1024]); // zeros: a tiny container, a value past the cap
        b.close();
        ByteBuf set = compress(plain, type);
        assertThat(set.readableBytes()).isLessThan((int) CAP / 16);
        assertThat(validate(set)).isEqualTo(Errors.INVALID_RECORD);
        assertThat(validator.outcome()).isEqualTo(CompressedRecordsValidator.OVER_CAP);
        assertThat(validator.lastDecompressedBytes()).isLessThanOrEqualTo(CAP);
        assertThat(validator.failureReason()).contains(Long.toString(CAP));
        assertThat(maxTimestamps.size()).isZero();
        // The same validator goes on with the next batch.
        assertThat(validate(compress(batch(2, 10), type))).isEqualTo(Errors.NONE);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void malformedAndTruncatedContainersAreCorruptMessage(CompressionType type) {
        ByteBuf good = compress(batch(20, 300), type);
        byte[] section = section(good);
        byte[] flipped = section.clone();
        flipped[0] ^= 0x5a; // the container's magic or header
        assertThat(validate(withSection(good, flipped))).isEqualTo(Errors.CORRUPT_MESSAGE);
        assertThat(validator.outcome()).isEqualTo(CompressedRecordsValidator.MALFORMED);
        assertThat(validator.failureReason()).isNotBlank();

        byte[] cut = Arrays.copyOf(section, section.length / 2);
        assertThat(validate(withSection(good, cut))).isEqualTo(Errors.CORRUPT_MESSAGE);
        assertThat(validator.outcome()).isEqualTo(CompressedRecordsValidator.MALFORMED);

        byte[] trailing = Arrays.copyOf(section, section.length + 7);
        assertThat(validate(withSection(good, trailing))).isIn(Errors.CORRUPT_MESSAGE, Errors.INVALID_RECORD);
        assertThat(validator.outcome()).isNotEqualTo(CompressedRecordsValidator.VALID);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aCountThatDisagreesWithTheRecordsIsInvalidRecord(CompressionType type) {
        for (int claimed : new int[] {19, 21}) {
            ByteBuf set = compress(batch(20, 30), type);
            set.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, claimed);
            set.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, claimed - 1);
            set.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(set, 0));
            assertThat(validate(set)).as("recordCount %d", claimed).isEqualTo(Errors.INVALID_RECORD);
            assertThat(validator.outcome()).isEqualTo(CompressedRecordsValidator.INVALID_RECORDS);
            assertThat(validator.failureReason())
                    .isEqualTo(
                            claimed < 20
                                    ? "more records or bytes than recordCount says (spec 7.7 step 7)"
                                    : "fewer records than recordCount says, or a record cut short (spec 7.7 step 7)");
        }
    }

    @Test
    void aNullKeyIsRefusedOnlyWhenKeysAreRequired() {
        ByteBuf plain = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(plain, TS);
        b.append(TS, "k".getBytes(UTF_8), null);
        b.append(TS, null, "v".getBytes(UTF_8));
        b.close();
        ByteBuf set = compress(plain, CompressionType.LZ4);
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        validator.requireKeys(true);
        assertThat(validate(set)).isEqualTo(Errors.INVALID_RECORD);
        assertThat(validator.failureReason())
                .isEqualTo("a record without a key on a compacted topic (cleanup.policy=compact) (spec 7.7 step 7)");
        validator.requireKeys(false);
        assertThat(validate(set)).isEqualTo(Errors.NONE);
    }

    @Test
    void decompressingGivesBackTheBatchAsBuilt() {
        ByteBuf plain = batch(30, 50);
        for (CompressionType type :
                List.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD)) {
            ByteBuf compressed = compress(plain, type);
            ByteBuf back = bufs.heap();
            try (CompressionCodec codec = CompressionCodecs.codec(type);
                    Decompressor d = codec.newDecompressor()) {
                assertThat(BatchCompression.decompress(compressed, 0, d, CAP, back))
                        .isEqualTo(plain.readableBytes());
                assertThat(BatchCompression.decompress(compressed, 0, d, 100, back))
                        .isEqualTo(BatchCompression.OVER_CAP);
            }
            assertThat(ByteBufUtil.equals(back, plain)).as(type.name()).isTrue();
        }
    }

    /**
     * One changed byte anywhere in the uncompressed records: the compressed batch gets the verdict
     * the uncompressed walk gives (both re-stamped with a good CRC), so the two walks apply the same
     * rules.
     */
    @Property(tries = 300)
    void sameVerdictAsTheUncompressedWalk(
            @ForAll("codecs") CompressionType type,
            @ForAll @IntRange(min = 0, max = 100_000) int where,
            @ForAll @IntRange(min = 1, max = 255) int xor,
            @ForAll @IntRange(min = 1, max = 12) int records) {
        ByteBuf plain = batch(records, 7);
        short expected = flipAndValidate(plain, where, xor);
        assertThat(validate(compress(plain, type))).isEqualTo(expected);
    }

    /**
     * XORs one byte of {@code plain}'s records ({@code where} modulo their length) with {@code xor},
     * re-stamps the CRC and returns the uncompressed walk's verdict.
     */
    private static short flipAndValidate(ByteBuf plain, int where, int xor) {
        int pos = RecordBatchLayout.RECORDS_OFFSET + where % (plain.writerIndex() - RecordBatchLayout.RECORDS_OFFSET);
        plain.setByte(pos, plain.getByte(pos) ^ xor);
        plain.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(plain, 0));
        return RecordBatchValidator.validate(plain, MAX_BATCH);
    }

    /** {@code plain} (an uncompressed batch) as a zstd batch of ours: the content size in its header. */
    private ByteBuf zstdBatch(ByteBuf plain) {
        return compress(plain, CompressionType.ZSTD);
    }

    @Property(tries = 60)
    void sameVerdictAsTheUncompressedWalkWhenZstdDecodesInOnePass(
            @ForAll @IntRange(min = 0, max = 400_000) int where,
            @ForAll @IntRange(min = 1, max = 255) int xor,
            @ForAll @IntRange(min = 12, max = 40) int records) {
        ByteBuf plain = textBatch(records, 12_000); // 144-480 KB: more than the chunk, one region
        short expected = flipAndValidate(plain, where, xor);
        assertThat(validate(zstdBatch(plain))).isEqualTo(expected);
        assertThat(validator.lastInOneRegion()).isTrue();
        assertThat(validator.lastInPlace()).isTrue();
    }

    /** As above with a 3 MB batch: read in about 20 steps, records straddling the steps' ends. */
    @Property(tries = 15)
    void sameVerdictWhenALargeZstdBatchIsReadInSteps(
            @ForAll @IntRange(min = 0, max = 4_000_000) int where, @ForAll @IntRange(min = 1, max = 255) int xor) {
        ByteBuf plain = textBatch(1_500, 2_000);
        short expected = flipAndValidate(plain, where, xor);
        assertThat(validate(zstdBatch(plain))).isEqualTo(expected);
        assertThat(validator.lastInPlace()).isTrue();
        if (expected == Errors.NONE) {
            assertThat(validator.lastReads()).isGreaterThan(10);
        }
    }

    /**
     * A header that understates the size, and a bad first record: read in steps, the walk meets the
     * record before zstd meets the end of the declared size (as a streamed frame would): refused
     * either way, here as INVALID_RECORD.
     */
    @Test
    void aLyingZstdHeaderWithABadRecordBeforeTheLieIsRefused() {
        ByteBuf plain = textBatch(1_500, 2_000);
        int attributes = RecordBatchLayout.RECORDS_OFFSET + 4; // record 0's attributes byte, after its length
        plain.setByte(attributes, 1);
        plain.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(plain, 0));
        ByteBuf good = zstdBatch(plain);
        long real = plain.readableBytes() - RecordBatchLayout.RECORDS_OFFSET;
        ByteBuf lying = withSection(good, withDeclaredSize(section(good), real - 1));
        assertThat(validate(lying)).isEqualTo(Errors.INVALID_RECORD);
        assertThat(validator.outcome()).isEqualTo(CompressedRecordsValidator.INVALID_RECORDS);
        assertThat(validator.lastInPlace()).isTrue();
    }

    @Test
    void aZstdBatchDeclaringItsSizeIsWalkedInOneRegionUnlessOverTheCapOrSmall() {
        ByteBuf plain = textBatch(200, 2_000); // about 420 KB
        ByteBuf set = zstdBatch(plain);
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        assertThat(validator.lastInOneRegion()).isTrue();
        assertThat(validator.lastInPlace()).isTrue();
        assertThat(maxTimestamps.get(0)).isEqualTo(TS + 199);
        assertThat(validator.lastDecompressedBytes())
                .isEqualTo(plain.readableBytes() - RecordBatchLayout.RECORDS_OFFSET);
        // Smaller than the chunk: the chunk.
        assertThat(validate(zstdBatch(textBatch(5, 100)))).isEqualTo(Errors.NONE);
        assertThat(validator.lastInOneRegion()).isFalse();
        // Declared size over the cap: streamed through the chunk to the cap, refused there.
        try (CompressedRecordsValidator small = new CompressedRecordsValidator(300_000)) {
            maxTimestamps.clear();
            assertThat(RecordBatchValidator.validate(set, MAX_BATCH, false, maxTimestamps, small))
                    .isEqualTo(Errors.INVALID_RECORD);
            assertThat(small.outcome()).isEqualTo(CompressedRecordsValidator.OVER_CAP);
            assertThat(small.lastInOneRegion()).isFalse();
            assertThat(small.lastDecompressedBytes()).isEqualTo(300_000);
        }
        // Other codecs never declare a one-pass size.
        assertThat(validate(compress(plain, CompressionType.LZ4))).isEqualTo(Errors.NONE);
        assertThat(validator.lastInOneRegion()).isFalse();
    }

    @Test
    void aZstdFrameThatMisstatesItsSizeIsCorruptMessage() {
        ByteBuf plain = textBatch(200, 2_000);
        ByteBuf good = zstdBatch(plain);
        byte[] section = section(good);
        long real = plain.readableBytes() - RecordBatchLayout.RECORDS_OFFSET;
        // 200,000: less than the region the good batch left; real + 1 grows it; 100,000: the chunk.
        for (long declared : new long[] {200_000, real - 1, real + 1, 100_000}) {
            assertThat(validate(good)).isEqualTo(Errors.NONE);
            ByteBuf lying = withSection(good, withDeclaredSize(section, declared));
            assertThat(validate(lying)).as("declared %d of %d", declared, real).isEqualTo(Errors.CORRUPT_MESSAGE);
            assertThat(validator.outcome()).isEqualTo(CompressedRecordsValidator.MALFORMED);
            assertThat(validator.lastInOneRegion()).isEqualTo(declared > 131_072);
            assertThat(validator.lastInPlace()).isEqualTo(declared > 131_072);
            assertThat(maxTimestamps.size()).isZero();
        }
        assertThat(validate(good)).isEqualTo(Errors.NONE); // and the next batch is fine
        assertThat(validator.lastInOneRegion()).isTrue();
    }

    /**
     * One raw block of {@code n} bytes {@code x} in a zstd frame that declares {@code declared} bytes
     * (single segment, 4-byte content size): a few dozen bytes that ask for a region of any size.
     */
    private static byte[] rawFrame(int n, long declared) {
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.writeBytes(new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd, (byte) 0xa0});
        for (int i = 0; i < 4; i++) {
            f.write((int) (declared >>> (8 * i)));
        }
        int header = n << 3 | 1; // raw block, last
        f.writeBytes(new byte[] {(byte) header, (byte) (header >>> 8), (byte) (header >>> 16)});
        f.writeBytes("x".repeat(n).getBytes(UTF_8));
        return f.toByteArray();
    }

    @Test
    void aSmallFrameDeclaringMegabytesStreamsThroughTheChunkAndAllocatesNoRegion() {
        ByteBuf shell = zstdBatch(batch(1, 10));
        for (long declared : new long[] {8 << 20, 4 << 20, 200_000}) {
            ByteBuf lying = withSection(shell, rawFrame(64, declared)); // 76 bytes sent
            assertThat(validate(lying)).as("declares %d", declared).isIn(Errors.CORRUPT_MESSAGE, Errors.INVALID_RECORD);
            assertThat(validator.outcome()).isNotEqualTo(CompressedRecordsValidator.VALID);
            assertThat(validator.lastInOneRegion()).isFalse();
            assertThat(validator.regionBytes()).isZero();
        }
        assertThat(CompressedRecordsValidator.onePassBytes(200_000, 76, CAP)).isZero();
        assertThat(CompressedRecordsValidator.onePassBytes(200_000, 4_000, CAP)).isEqualTo(200_000);
        assertThat(CompressedRecordsValidator.onePassBytes(9 << 20, 1 << 20, 64 << 20))
                .isZero(); // over 8 MiB
        assertThat(CompressedRecordsValidator.onePassBytes(300_000, 100_000, 200_000))
                .isZero(); // over the cap
        assertThat(CompressedRecordsValidator.onePassBytes(-1, 100_000, CAP)).isZero();
    }

    @Test
    void aRefusedBatchLeavesTheRegionForTheNextWithoutAllocatingAgain() {
        ByteBuf set = zstdBatch(textBatch(200, 2_000));
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        int region = validator.regionBytes();
        assertThat(region).isPositive();
        ByteBuf bad = set.copy();
        bad.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, 199);
        bad.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, 198);
        bad.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(bad, 0));
        try {
            assertThat(validate(bad)).isEqualTo(Errors.INVALID_RECORD);
            assertThat(validator.lastInOneRegion()).isTrue();
            assertThat(validator.regionBytes()).isEqualTo(region);
            assertThat(validate(set)).isEqualTo(Errors.NONE);
            assertThat(validator.regionBytes()).isEqualTo(region);
        } finally {
            bad.release();
        }
    }

    @Test
    void theRegionGrowsByHalvesButNeverPastTheCap() {
        ByteBuf[] plains = {textBatch(150, 2_000), textBatch(200, 2_000), textBatch(285, 2_000)};
        long[] sizes = new long[plains.length];
        for (int i = 0; i < plains.length; i++) {
            sizes[i] = plains[i].readableBytes() - RecordBatchLayout.RECORDS_OFFSET;
        }
        long cap = sizes[2] + 1_000;
        try (CompressedRecordsValidator capped = new CompressedRecordsValidator(cap)) {
            long[] expected = {sizes[0], Math.max(sizes[1], sizes[0] * 3 / 2), cap};
            for (int i = 0; i < plains.length; i++) {
                maxTimestamps.clear();
                assertThat(RecordBatchValidator.validate(zstdBatch(plains[i]), MAX_BATCH, false, maxTimestamps, capped))
                        .isEqualTo(Errors.NONE);
                assertThat(capped.lastInOneRegion()).isTrue();
                assertThat(capped.regionBytes())
                        .as("batch %d of %d bytes", i, sizes[i])
                        .isEqualTo((int) expected[i]);
            }
        }
    }

    @Test
    void aLongerZstdFrameAfterOneReadInOnePassIsStreamedThroughTheSameRegion() {
        ByteBuf plain = textBatch(300, 3_000);
        int sectionBytes = plain.readableBytes() - RecordBatchLayout.RECORDS_OFFSET;
        ByteBuf frames = bufs.direct();
        int first = sectionBytes / 5 + 17; // mid-record: the container is a byte stream
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD)) {
            codec.compress(plain.slice(RecordBatchLayout.RECORDS_OFFSET, first), frames);
            codec.compress(plain.slice(RecordBatchLayout.RECORDS_OFFSET + first, sectionBytes - first), frames);
        }
        ByteBuf set = withSection(plain, ByteBufUtil.getBytes(frames));
        set.setShort(
                RecordBatchLayout.ATTRIBUTES_OFFSET, RecordBatchLayout.attributes(set, 0) | CompressionType.ZSTD.id());
        set.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(set, 0));
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        assertThat(validator.lastInOneRegion()).isTrue();
        assertThat(validator.lastInPlace()).isTrue();
        // The region is the first frame's size: the second, four times longer, cannot go in one pass.
        assertThat(validator.regionBytes()).isEqualTo(first);
        assertThat(validator.lastDecompressedBytes()).isEqualTo(sectionBytes);
    }

    @Provide
    Arbitrary<CompressionType> codecs() {
        return Arbitraries.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD);
    }
}
