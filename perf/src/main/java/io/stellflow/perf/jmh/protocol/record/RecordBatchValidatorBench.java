package io.stellflow.perf.jmh.protocol.record;

import io.netty.buffer.ByteBuf;
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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Produce-path validation of 1 MiB of 1 KiB records (one batch, as the producer builds it with
 * batch.size 1 MiB) in a direct buffer: {@code validate} ({@code docs/spec/wire-protocol.md} §7.7
 * steps 1-7, CRC-32C over the batch) versus the CRC-32C alone, to show what the checks cost beyond
 * the checksum. Values from SplittableRandom(42). Time per MiB; the score's inverse is MiB/s.
 *
 * <p>{@code buffers}: {@code pooled} validates the pooled buffer itself every time; {@code mixed}
 * takes turns with a slice of it and a copy in a leak detector's wrapper, the buffer classes a broker
 * sees (a Produce's records are a slice of its frame, and Netty wraps a sample of its buffers to
 * detect leaks), so the JIT compiles the validation for all three, as it does in the broker.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Dio.netty.leakDetection.samplingInterval=1"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RecordBatchValidatorBench {
    static final int SET_BYTES = 1 << 20;
    static final int RECORD_BYTES = 1024;

    @Param({"pooled", "mixed"})
    public String buffers;

    private ByteBuf recordSet;
    private ByteBuf wrapped;
    private ByteBuf[] sets;
    private int next;

    @Setup
    public void setUp() {
        recordSet = RecordBatchBuilderBench.allocate(SET_BYTES + 4096, false);
        SplittableRandom random = new SplittableRandom(42);
        byte[] value = new byte[RECORD_BYTES];
        RecordBatchBuilder b = new RecordBatchBuilder(recordSet, 1_700_000_000_000L);
        int perRecord = RecordBatchBuilder.recordSizeInBytes(0, RECORD_BYTES, java.util.List.of());
        while (b.sizeInBytes() + perRecord <= SET_BYTES) {
            random.nextBytes(value);
            b.append(1_700_000_000_000L + b.recordCount(), null, value);
        }
        b.close();
        if ("mixed".equals(buffers)) {
            wrapped = RecordBatchBuilderBench.allocate(recordSet.readableBytes(), true);
            if (wrapped.getClass() == recordSet.getClass()) {
                throw new IllegalStateException("the leak detector did not wrap the buffer");
            }
            wrapped.writeBytes(recordSet, recordSet.readerIndex(), recordSet.readableBytes());
            sets = new ByteBuf[] {recordSet, recordSet.slice(), wrapped};
        } else {
            sets = new ByteBuf[] {recordSet};
        }
        for (ByteBuf set : sets) {
            if (RecordBatchValidator.validate(set, Integer.MAX_VALUE) != Errors.NONE) {
                throw new IllegalStateException("the benchmark batch does not validate");
            }
        }
    }

    @TearDown
    public void tearDown() {
        recordSet.release();
        if (wrapped != null) {
            wrapped.release();
        }
    }

    @Benchmark
    public short validate() {
        ByteBuf set = sets[next];
        next = next + 1 == sets.length ? 0 : next + 1;
        return RecordBatchValidator.validate(set, Integer.MAX_VALUE);
    }

    @Benchmark
    public int crc32cOnly() {
        return Crc32c.compute(recordSet, recordSet.readerIndex(), recordSet.readableBytes());
    }
}
