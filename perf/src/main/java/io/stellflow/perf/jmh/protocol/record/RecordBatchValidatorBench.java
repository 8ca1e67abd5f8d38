package io.stellflow.perf.jmh.protocol.record;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.Crc32c;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Produce-path validation of 1 MiB of 1 KiB records (one batch, as the producer builds it with
 * batch.size 1 MiB) in a direct buffer: {@code validate} (spec §7.7 steps 1-7, CRC-32C over the
 * batch) versus the CRC-32C alone, to show what the checks cost beyond the checksum. Values from
 * SplittableRandom(42). Time per MiB; the score's inverse is MiB/s.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RecordBatchValidatorBench {
    static final int SET_BYTES = 1 << 20;
    static final int RECORD_BYTES = 1024;

    private ByteBuf recordSet;

    @Setup
    public void setUp() {
        recordSet = PooledByteBufAllocator.DEFAULT.directBuffer(SET_BYTES + 4096);
        SplittableRandom random = new SplittableRandom(42);
        byte[] value = new byte[RECORD_BYTES];
        RecordBatchBuilder b = new RecordBatchBuilder(recordSet, 1_700_000_000_000L);
        int perRecord = RecordBatchBuilder.recordSizeInBytes(0, RECORD_BYTES, java.util.List.of());
        while (b.sizeInBytes() + perRecord <= SET_BYTES) {
            random.nextBytes(value);
            b.append(1_700_000_000_000L + b.recordCount(), null, value);
        }
        b.close();
        if (RecordBatchValidator.validate(recordSet, Integer.MAX_VALUE) != Errors.NONE) {
            throw new IllegalStateException("the benchmark batch does not validate");
        }
    }

    @TearDown
    public void tearDown() {
        recordSet.release();
    }

    @Benchmark
    public short validate() {
        return RecordBatchValidator.validate(recordSet, Integer.MAX_VALUE);
    }

    @Benchmark
    public int crc32cOnly() {
        return Crc32c.compute(recordSet, recordSet.readerIndex(), recordSet.readableBytes());
    }
}
