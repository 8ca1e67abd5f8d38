package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.CompactionTest.Rec;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compressed batches (decision 9.o) in the storage paths that read records: compaction decompresses
 * them, keeps the last record per key and compresses a batch that lost records again with its own
 * codec; a time lookup finds the record inside a compressed batch; recovery after a crash reopens a
 * compressed log byte for byte.
 */
@IntegrationTest
class CompressedStorageTest {
    private static final CompressionType[] CODECS = {
        CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD, CompressionType.NONE
    };

    @TempDir
    Path dir;

    /** A batch of key/value records at {@code ts, ts + stepMs, ...}, compressed with {@code type} (NONE: plain). */
    private static ByteBuf batch(CompressionType type, long ts, long stepMs, String... keyValues) {
        ByteBuf plain = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(plain, ts);
        for (int i = 0; i < keyValues.length; i += 2) {
            b.append(ts + stepMs * (i / 2), bytes(keyValues[i]), bytes(keyValues[i + 1]));
        }
        b.close();
        if (type == CompressionType.NONE) {
            return plain;
        }
        ByteBuf out = Unpooled.buffer();
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            BatchCompression.compress(plain, 0, codec, out);
        }
        plain.release();
        return out;
    }

    private static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** The stored set from {@code from} with every compressed batch decompressed; the codec of each batch in {@code codecs}. */
    private static ByteBuf readPlain(UnifiedLog log, long from, List<Integer> codecs) throws IOException {
        ByteBuf stored = Unpooled.buffer();
        ByteBuf plain = Unpooled.buffer();
        try {
            log.readInto(from, Integer.MAX_VALUE, Long.MAX_VALUE, true, stored);
            for (int p = 0; p < stored.writerIndex(); p += RecordBatchLayout.batchSize(stored, p)) {
                assertThat(RecordBatchLayout.computeCrc(stored, p)).isEqualTo(RecordBatchLayout.crc(stored, p));
                int codec = RecordBatchLayout.attributes(stored, p) & RecordBatchLayout.COMPRESSION_CODEC_MASK;
                codecs.add(codec);
                if (codec == 0) {
                    plain.writeBytes(stored, p, RecordBatchLayout.batchSize(stored, p));
                    continue;
                }
                try (CompressionCodec c = CompressionCodecs.codec(CompressionType.forId(codec));
                        Decompressor d = c.newDecompressor()) {
                    assertThat(BatchCompression.decompress(stored, p, d, 1 << 24, plain))
                            .isPositive();
                }
            }
            return plain;
        } finally {
            stored.release();
        }
    }

    private static List<Rec> readAll(UnifiedLog log, long from, List<Integer> codecs) throws IOException {
        ByteBuf plain = readPlain(log, from, codecs);
        try {
            return CompactionTest.decode(plain, from);
        } finally {
            plain.release();
        }
    }

    @Test
    void compactionReadsCompressedBatchesAndKeepsTheirCodec() throws IOException {
        LogConfig config = LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(64)
                .indexMaxBytes(4096)
                .cleanupPolicy("compact")
                .minCleanableDirtyRatio(0)
                .fileDeleteDelayMs(1000)
                .build();
        SplittableRandom random = new SplittableRandom(21);
        List<Rec> expected;
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            long next = 0;
            for (int b = 0; b < 40; b++) {
                int n = 1 + random.nextInt(6);
                String[] kv = new String[2 * n];
                for (int i = 0; i < n; i++) {
                    kv[2 * i] = "k" + random.nextInt(10);
                    kv[2 * i + 1] = "v" + (next + i);
                }
                ByteBuf batch = batch(CODECS[b % CODECS.length], env.nowMs(), 0, kv);
                log.appendAsLeader(batch, 1);
                batch.release();
                next += n;
            }
            assertThat(log.segmentCount()).isGreaterThan(3);
            List<Integer> codecsBefore = new ArrayList<>();
            List<Rec> before = readAll(log, 0, codecsBefore);
            assertThat(codecsBefore).contains(1, 2, 3, 4, 0);
            LogSegment[] segs = log.segmentsForTesting();
            long active = segs[segs.length - 1].baseOffset;
            Map<String, Long> last = new HashMap<>();
            for (Rec r : before) {
                if (r.offset() < active) {
                    last.put(r.key(), r.offset());
                }
            }
            expected = before.stream()
                    .filter(r -> r.offset() >= active || last.get(r.key()) == r.offset())
                    .toList();
            assertThat(expected.size()).isLessThan(before.size());

            CompactionResult result = log.compact(Long.MAX_VALUE);

            assertThat(result.recordsRemoved()).isEqualTo(before.size() - expected.size());
            List<Integer> codecsAfter = new ArrayList<>();
            assertThat(readAll(log, 0, codecsAfter)).isEqualTo(expected);
            // Batches that lost records kept their codec: all five kinds are still stored.
            assertThat(codecsAfter).contains(1, 2, 3, 4, 0);
            assertThat(log.compact(Long.MAX_VALUE).recordsRemoved()).isZero();
            log.crashForTesting();
        }
        // An unclean reopen revalidates the compacted, recompressed batches.
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            assertThat(readAll(log, 0, new ArrayList<>())).isEqualTo(expected);
        }
    }

    @Test
    void aTimeLookupFindsTheRecordInsideACompressedBatch() throws IOException {
        LogConfig config = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            int offset = 0;
            for (CompressionType type : CODECS) {
                // Records at base + 0, 1000, 2000, 3000 ms; each codec's batch 10 s after the previous.
                long base = 100_000L + offset / 4 * 10_000L;
                ByteBuf b = batch(type, base, 1000, "a", "1", "b", "2", "c", "3", "d", "4");
                log.appendAsLeader(b, 0);
                b.release();
                offset += 4;
            }
            for (int i = 0; i < CODECS.length; i++) {
                long base = 100_000L + i * 10_000L;
                assertThat(log.offsetForTimestamp(base + 1500, Long.MAX_VALUE))
                        .as(CODECS[i].name())
                        .isEqualTo(new TimestampOffset(base + 2000, i * 4L + 2));
                assertThat(log.offsetForTimestamp(base, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(base, i * 4L));
            }
            assertThat(log.offsetForTimestamp(100_000L + 4 * 10_000L + 3001, Long.MAX_VALUE))
                    .isNull();
            assertThat(log.offsetOfMaxTimestamp(Long.MAX_VALUE))
                    .isEqualTo(new TimestampOffset(100_000L + 4 * 10_000L + 3000, 19));
            // The largest timestamp inside a compressed batch (the lz4 one, offsets 8-11).
            assertThat(log.offsetOfMaxTimestamp(12)).isEqualTo(new TimestampOffset(100_000L + 20_000L + 3000, 11));
        }
    }

    @Test
    void aCompressedLogReopensByteForByteAfterACrash() throws IOException {
        LogConfig config = new LogConfig(4096, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);
        List<Rec> before;
        Map<Path, byte[]> files = new HashMap<>();
        long end;
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            for (int b = 0; b < 30; b++) {
                ByteBuf batch = batch(CODECS[b % CODECS.length], 1_000L * b, 10, "k" + b, "value " + b, "x", "y" + b);
                log.appendAsLeader(batch, 0);
                batch.release();
            }
            end = log.logEndOffset();
            before = readAll(log, 0, new ArrayList<>());
            try (var stream = Files.list(dir)) {
                for (Path p : stream.filter(p -> p.toString().endsWith(".log")).toList()) {
                    files.put(p, Files.readAllBytes(p));
                }
            }
            log.crashForTesting();
        }
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            assertThat(log.logEndOffset()).isEqualTo(end).isEqualTo(60);
            assertThat(readAll(log, 0, new ArrayList<>())).isEqualTo(before);
            for (Map.Entry<Path, byte[]> e : files.entrySet()) {
                assertThat(Files.readAllBytes(e.getKey()))
                        .as(e.getKey().toString())
                        .isEqualTo(e.getValue());
            }
            assertThat(log.offsetForTimestamp(15_005, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(15_010, 31));
        }
    }
}
