package io.stellflow.perf.jmh.protocol.record;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.perf.data.JsonLogLines;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The broker's Produce validation of one compressed batch (issue #21): {@link RecordBatchValidator}
 * with a {@link CompressedRecordsValidator} as an append agent runs it, over one batch of about 1 MiB
 * or 4.5 MiB ({@link #dataBytes}) of JSON log lines ({@link JsonLogLines}, seed 42, one line per
 * record with a key: about 3,700 or 16,500 records), compressed with each codec at Kafka's default
 * level. The setup prints the record count;
 * with {@code -prof gc}, {@code gc.alloc.rate.norm} / records = heap bytes per record (the goal is
 * zero per record; what is left is per batch: NIO views, and the lz4/snappy libraries' stream
 * objects). {@code none} is the uncompressed walk for comparison. Run: {@code perf/jmh.sh
 * CompressedValidationBench --short -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class CompressedValidationBench {
    @Param({"none", "gzip", "snappy", "lz4", "zstd"})
    public String codec;

    /**
     * Uncompressed value bytes per batch: 1 MiB, and 4.5 MiB, what a 1 MiB zstd batch of these lines
     * holds (the lab's compressed produce cases: {@code batch.size=1048576}).
     */
    @Param({"1048576", "4718592"})
    public int dataBytes;

    private ByteBuf batch;
    private CompressedRecordsValidator validator;
    private final BatchMaxTimestamps maxTimestamps = new BatchMaxTimestamps(4);
    private int records;

    @Setup
    public void setUp() {
        PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        ByteBuf plain = alloc.heapBuffer(dataBytes + dataBytes / 4);
        JsonLogLines lines = new JsonLogLines(42);
        long ts = 1_764_806_400_000L;
        RecordBatchBuilder b = new RecordBatchBuilder(plain, ts);
        int bytes = 0;
        while (bytes < dataBytes) {
            byte[] value = lines.nextLine().getBytes(StandardCharsets.UTF_8);
            b.append(ts + records, ("key-" + records % 1000).getBytes(StandardCharsets.UTF_8), value, List.of());
            bytes += value.length;
            records++;
        }
        b.close();
        CompressionType type = CompressionType.forName(codec);
        batch = alloc.directBuffer(dataBytes + dataBytes / 4);
        if (type == CompressionType.NONE) {
            batch.writeBytes(plain, 0, plain.writerIndex());
        } else {
            try (CompressionCodec c = CompressionCodecs.codec(type)) {
                BatchCompression.compress(plain, 0, c, batch);
            }
        }
        System.out.printf(
                "%n[validation] codec=%s records=%d uncompressed=%d stored=%d%n",
                codec, records, plain.readableBytes(), batch.readableBytes());
        plain.release();
        validator = new CompressedRecordsValidator(CompressedRecordsValidator.DEFAULT_MAX_DECOMPRESSED_BYTES);
        if (validate() != Errors.NONE) {
            throw new IllegalStateException(codec + " batch does not validate");
        }
    }

    @TearDown
    public void tearDown() {
        validator.close();
        batch.release();
    }

    /** Validates the batch (spec 7.7 steps 1-8, step 7 by streaming decompression); returns the code. */
    @Benchmark
    public short validate() {
        maxTimestamps.clear();
        return RecordBatchValidator.validate(batch, 64 << 20, false, maxTimestamps, validator);
    }
}
