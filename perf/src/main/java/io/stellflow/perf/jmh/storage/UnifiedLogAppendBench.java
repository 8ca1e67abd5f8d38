package io.stellflow.perf.jmh.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchValidator;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Appending one 1 MiB batch (1 KiB records, SplittableRandom(42) values) to a {@link UnifiedLog}
 * (offset assignment, epoch stamp, index entries, segment write; no fsync) versus a plain
 * sequential {@link FileChannel#write} of the same bytes: the difference is what the log adds
 * over the file system. Segments of 256 MiB, so rolls are part of the cost; a fresh directory per
 * iteration keeps the disk use bounded. Time per MiB.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class UnifiedLogAppendBench {
    static final int BATCH_BYTES = 1 << 20;
    static final int SEGMENT_BYTES = 256 << 20;

    private ByteBuf batch;
    private ByteBuffer plain;
    private Path dir;
    private UnifiedLog log;
    private FileChannel file;

    @Setup
    public void setUpBatch() {
        batch = PooledByteBufAllocator.DEFAULT.directBuffer(BATCH_BYTES + 4096);
        SplittableRandom random = new SplittableRandom(42);
        byte[] value = new byte[1024];
        RecordBatchBuilder b = new RecordBatchBuilder(batch, 1_700_000_000_000L);
        int perRecord = RecordBatchBuilder.recordSizeInBytes(0, value.length, List.of());
        while (b.sizeInBytes() + perRecord <= BATCH_BYTES) {
            random.nextBytes(value);
            b.append(1_700_000_000_000L, null, value);
        }
        b.close();
        if (RecordBatchValidator.validate(batch, Integer.MAX_VALUE) != Errors.NONE) {
            throw new IllegalStateException("the benchmark batch does not validate");
        }
        plain = ByteBuffer.allocateDirect(batch.readableBytes());
        batch.getBytes(batch.readerIndex(), plain.duplicate());
    }

    @Setup(Level.Iteration)
    public void setUpFiles() throws IOException {
        dir = Files.createTempDirectory("sf-append-bench");
        log = UnifiedLog.open(
                dir.resolve("bench-0"),
                LogConfig.builder().segmentBytes(SEGMENT_BYTES).build());
        file = FileChannel.open(dir.resolve("plain.log"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    @TearDown(Level.Iteration)
    public void tearDownFiles() throws IOException {
        log.close();
        file.close();
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @TearDown
    public void tearDownBatch() {
        batch.release();
    }

    @Benchmark
    public long unifiedLogAppend() throws IOException {
        return log.appendAsLeader(batch, 0);
    }

    @Benchmark
    public long fileChannelWrite() throws IOException {
        ByteBuffer b = plain.duplicate();
        long n = 0;
        while (b.hasRemaining()) {
            n += file.write(b);
        }
        return n;
    }
}
