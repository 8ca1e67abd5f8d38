package io.stellflow.perf.jmh.protocol.compression;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.perf.data.JsonLogLines;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
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
 * Compress and decompress 1 MiB of JSON log lines ({@link JsonLogLines}, seed 42: one batch at
 * batch.size 1 MiB) with each codec of {@code io.stellflow.protocol.compression}, pooled direct
 * buffers in and out, the decompressor reading into a reusable 64 KiB chunk under a cap of the data
 * size. Time per op = per MiB of uncompressed data: MiB/s = 1e6 / score. The setup prints the
 * compression ratio.
 *
 * <p>{@code codec}: a type, or {@code type:level} for a level other than Kafka's default (lz4's
 * default 9 is LZ4 HC; level 1 is the fast compressor).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class CompressionBench {
    static final int DATA_BYTES = 1 << 20;
    static final int CHUNK_BYTES = 64 << 10;

    @Param({"gzip", "snappy", "lz4", "lz4:1", "zstd", "zstd:1"})
    public String codec;

    private CompressionCodec compressor;
    private Decompressor decompressor;
    private ByteBuf data;
    private ByteBuf compressed;
    private ByteBuf out;
    private ByteBuf chunk;

    @Setup
    public void setUp() {
        String[] parts = codec.split(":");
        CompressionType type = CompressionType.forName(parts[0]);
        CompressionConfig config = parts.length == 1
                ? CompressionConfig.DEFAULT
                : CompressionConfig.DEFAULT.withLevel(type, Integer.parseInt(parts[1]));
        compressor = CompressionCodecs.codec(type, config);
        decompressor = compressor.newDecompressor();
        PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        data = alloc.directBuffer(DATA_BYTES).writeBytes(JsonLogLines.generate(42, DATA_BYTES));
        compressed = alloc.directBuffer(DATA_BYTES);
        compressor.compress(data, compressed);
        out = alloc.directBuffer(DATA_BYTES + DATA_BYTES / 8);
        chunk = alloc.directBuffer(CHUNK_BYTES, CHUNK_BYTES);
        if (decompress() != DATA_BYTES) {
            throw new IllegalStateException(codec + " does not round-trip: " + decompressor.failureReason());
        }
        System.out.printf(
                "%n[compression] codec=%s uncompressed=%d compressed=%d ratio=%.2f%n",
                codec, DATA_BYTES, compressed.readableBytes(), (double) DATA_BYTES / compressed.readableBytes());
    }

    @TearDown
    public void tearDown() {
        decompressor.close();
        compressor.close();
        data.release();
        compressed.release();
        out.release();
        chunk.release();
    }

    /** Compresses the 1 MiB; returns the compressed size. */
    @Benchmark
    public int compress() {
        out.clear();
        return compressor.compress(data, out);
    }

    /** Decompresses the 1 MiB in 64 KiB chunks; returns the decompressed size. */
    @Benchmark
    public long decompress() {
        decompressor.reset(compressed, DATA_BYTES);
        int n;
        while ((n = decompressor.read(chunk.clear())) > 0) {
            // the chunk is consumed here (a validator would walk its records)
        }
        if (n != Decompressor.END_OF_STREAM) {
            throw new IllegalStateException(codec + ": " + n + " " + decompressor.failureReason());
        }
        return decompressor.decompressedBytes();
    }
}
