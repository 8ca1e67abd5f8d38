package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-dump-log.sh --deep-iteration} and {@code --print-data-log} on a segment holding a
 * plain batch and one batch per codec (as a broker stores them with {@code compression.type=producer}):
 * every record of every batch is printed, the compressed ones decompressed, where the tool used to
 * print {@code records not decoded: ... FEATURE_NOT_ENABLED} for each compressed batch; a damaged
 * container is reported as not decoded with its codec, and the run ends with exit 1.
 */
class DumpLogCompressedTest {
    private static final String SEGMENT = "00000000000000000000";
    private static final List<CompressionType> CODECS = List.of(
            CompressionType.NONE,
            CompressionType.GZIP,
            CompressionType.SNAPPY,
            CompressionType.LZ4,
            CompressionType.ZSTD);
    private static final int RECORDS_PER_BATCH = 3;

    @TempDir
    Path dir;

    private static ToolRun run(String... args) {
        return ToolRun.run(OneLineUsageErrors.commandLine(new DumpLogCommand()), args);
    }

    /** One batch per codec, offsets consecutive from 0; returns the segment's bytes. */
    private static byte[] segment() {
        ByteBuf out = Unpooled.buffer();
        long offset = 0;
        for (CompressionType type : CODECS) {
            ByteBuf plain = Unpooled.buffer();
            RecordBatchBuilder builder = new RecordBatchBuilder(plain, 1000);
            for (int i = 0; i < RECORDS_PER_BATCH; i++) {
                builder.append(1000 + offset + i, bytes("k" + (offset + i)), bytes(value(type, offset + i)));
            }
            builder.close();
            plain.setInt(0, (int) offset); // baseOffsetDelta from the segment's base (outside the CRC)
            int start = out.writerIndex();
            if (type == CompressionType.NONE) {
                out.writeBytes(plain);
            } else {
                try (CompressionCodec codec = CompressionCodecs.codec(type)) {
                    BatchCompression.compress(plain, 0, codec, out);
                }
                assertThat(RecordBatchLayout.attributes(out, start) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                        .isEqualTo(type.id());
            }
            plain.release();
            offset += RECORDS_PER_BATCH;
        }
        byte[] bytes = new byte[out.readableBytes()];
        out.readBytes(bytes);
        out.release();
        return bytes;
    }

    @Test
    void printsTheRecordsOfEveryCodecsBatch() throws Exception {
        Path log = Files.write(dir.resolve(SEGMENT + ".log"), segment());

        ToolRun data = run("--print-data-log", "--files", log.toString());
        assertThat(data.exit()).as(data.out() + data.err()).isZero();
        assertThat(data.out()).doesNotContain("not decoded");
        for (CompressionType type : CODECS) {
            assertThat(data.out()).contains(" compression: " + type.configName() + " ");
        }
        for (int i = 0; i < CODECS.size(); i++) {
            for (int r = 0; r < RECORDS_PER_BATCH; r++) {
                long offset = (long) i * RECORDS_PER_BATCH + r;
                String value = value(CODECS.get(i), offset);
                assertThat(data.out())
                        .contains("| offset: " + offset + " timestamp: " + (1000 + offset) + " keySize: "
                                + ("k" + offset).length() + " valueSize: " + value.length() + " headerKeys: [] key: k"
                                + offset + " payload: " + value + "\n");
            }
        }

        ToolRun deep = run("--deep-iteration", "--files", log.toString());
        assertThat(deep.exit()).isZero();
        assertThat(deep.out().lines().filter(l -> l.startsWith("| offset: ")))
                .hasSize(CODECS.size() * RECORDS_PER_BATCH);
    }

    @Test
    void aDamagedContainerIsReportedAsNotDecodedWithItsCodec() throws Exception {
        byte[] bytes = segment();
        // The zstd batch is the last one: cut its container's magic (CRC now wrong, batch still framed).
        int zstdStart = 0;
        for (int i = 0; i < CODECS.size() - 1; i++) {
            zstdStart += RecordBatchLayout.LOG_OVERHEAD
                    + Unpooled.wrappedBuffer(bytes).getInt(zstdStart + RecordBatchLayout.BATCH_LENGTH_OFFSET);
        }
        bytes[zstdStart + RecordBatchLayout.RECORDS_OFFSET] ^= 0x55;
        Path log = Files.write(dir.resolve(SEGMENT + ".log"), bytes);

        ToolRun deep = run("--deep-iteration", "--files", log.toString());
        assertThat(deep.exit()).isEqualTo(1);
        assertThat(deep.out())
                .contains(" compression: zstd producerId: -1 crcValid: false\n| records not decoded: ")
                .contains("zstd");
        assertThat(deep.out().lines().filter(l -> l.startsWith("| offset: ")))
                .hasSize((CODECS.size() - 1) * RECORDS_PER_BATCH);
        assertThat(deep.err()).contains("error: " + log + ": 1 batch(es) whose CRC does not match");
    }

    private static String value(CompressionType type, long offset) {
        return type.configName() + "-value-" + offset + "-" + "x".repeat(200);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
