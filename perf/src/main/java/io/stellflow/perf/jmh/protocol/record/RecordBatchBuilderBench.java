package io.stellflow.perf.jmh.protocol.record;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.util.List;
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
 * The producer's batch building: one 1 MiB batch of 1 KiB records (1,018 appends from arrays, no key,
 * no headers, then {@code close()} with its CRC-32C) into a pooled direct buffer, as {@code
 * ProducerBatch} does with batch.size 1 MiB. Values from SplittableRandom(42). Time per batch.
 *
 * <p>{@code buffers}: {@code pooled} builds into the same pooled buffer every time; {@code mixed}
 * takes turns with a buffer in a leak detector's wrapper (Netty wraps a sample of the producer's batch
 * buffers), so the JIT sees both classes at every write, as it does in a producer.
 *
 * <p>An idempotent producer then stamps the sealed batch with its producer id, epoch and base
 * sequence ({@code RecordBatchLayout.setProducerFields}, which sums the CRC-32C again): {@code
 * buildAndStampSummedTwice} is that with the CRC also summed at sealing (the producer until
 * 2026-12-06), {@code buildAndStampSummedOnce} seals without it ({@code close(false)}, what the
 * producer did from then until the stamp combined the records' CRC), {@code buildAndStampCombined}
 * sums the records at sealing and the stamp sums the 40 header bytes and combines ({@code
 * Crc32c.combine}, the producer now). {@code stampSummingWholeBatch} and {@code
 * stampCombiningRecordsCrc} time the stamp alone, the part the sender thread runs under the
 * producer's lock.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Dio.netty.leakDetection.samplingInterval=1"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RecordBatchBuilderBench {
    static final int BATCH_BYTES = 1 << 20;
    static final int RECORD_BYTES = 1024;
    static final long TIMESTAMP_MS = 1_700_000_000_000L;

    @Param({"pooled", "mixed"})
    public String buffers;

    private ByteBuf[] outs;
    private int next;
    private final byte[][] values = new byte[16][RECORD_BYTES];
    private int records;

    @Setup
    public void setUp() {
        SplittableRandom random = new SplittableRandom(42);
        for (byte[] v : values) {
            random.nextBytes(v);
        }
        ByteBuf pooled = allocate(BATCH_BYTES, false);
        outs = "mixed".equals(buffers) ? new ByteBuf[] {pooled, allocate(BATCH_BYTES, true)} : new ByteBuf[] {pooled};
        if (outs[outs.length - 1].getClass() == pooled.getClass() && outs.length > 1) {
            throw new IllegalStateException("the leak detector did not wrap the buffer");
        }
        int perRecord = RecordBatchBuilder.recordSizeInBytes(-1, RECORD_BYTES, List.of());
        records = (BATCH_BYTES - RecordBatchBuilder.batchOverheadBytes()) / perRecord;
    }

    /**
     * A pooled direct buffer, in the leak detector's SIMPLE wrapper (what production wraps a sample of
     * its buffers in; the fork samples every buffer) or not.
     */
    static ByteBuf allocate(int bytes, boolean wrapped) {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(
                wrapped ? ResourceLeakDetector.Level.SIMPLE : ResourceLeakDetector.Level.DISABLED);
        try {
            return PooledByteBufAllocator.DEFAULT.directBuffer(bytes);
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    @TearDown
    public void tearDown() {
        for (ByteBuf out : outs) {
            out.release();
        }
    }

    @Benchmark
    public int buildBatch() {
        RecordBatchBuilder b = fill(nextOut());
        b.close();
        return b.sizeInBytes();
    }

    @Benchmark
    public int buildAndStampSummedTwice() {
        return buildAndStamp(true);
    }

    @Benchmark
    public int buildAndStampSummedOnce() {
        return buildAndStamp(false);
    }

    /** What the producer does now: the records summed at sealing, the stamp combines (header only). */
    @Benchmark
    public int buildAndStampCombined() {
        ByteBuf out = nextOut();
        RecordBatchBuilder b = fill(out);
        b.close(false);
        int recordsCrc = RecordBatchLayout.recordsCrc(out, 0);
        RecordBatchLayout.setProducerFields(out, 0, 4242L, (short) 0, next, recordsCrc);
        return b.sizeInBytes();
    }

    /**
     * The stamp alone on a sealed batch (what the sender does under the accumulator's lock), summing
     * the whole batch: the producer until this change.
     */
    @Benchmark
    public int stampSummingWholeBatch(Sealed sealed) {
        RecordBatchLayout.setProducerFields(sealed.batch, 0, 4242L, (short) 0, sealed.sequence++);
        return RecordBatchLayout.crc(sealed.batch, 0);
    }

    /** The stamp alone from the records' CRC taken at sealing: the header's 40 bytes and a combine. */
    @Benchmark
    public int stampCombiningRecordsCrc(Sealed sealed) {
        RecordBatchLayout.setProducerFields(sealed.batch, 0, 4242L, (short) 0, sealed.sequence++, sealed.recordsCrc);
        return RecordBatchLayout.crc(sealed.batch, 0);
    }

    /** One sealed 1 MiB batch of the same records and its records' CRC, for the stamp benchmarks. */
    @State(Scope.Thread)
    public static class Sealed {
        ByteBuf batch;
        int recordsCrc;
        int sequence;

        @Setup
        public void setUp(RecordBatchBuilderBench bench) {
            batch = allocate(BATCH_BYTES, false);
            bench.fill(batch).close(false);
            recordsCrc = RecordBatchLayout.recordsCrc(batch, 0);
        }

        @TearDown
        public void tearDown() {
            batch.release();
        }
    }

    private int buildAndStamp(boolean crcAtSeal) {
        ByteBuf out = nextOut();
        RecordBatchBuilder b = fill(out);
        b.close(crcAtSeal);
        RecordBatchLayout.setProducerFields(out, 0, 4242L, (short) 0, next);
        return b.sizeInBytes();
    }

    /** The next buffer of {@link #outs} in turn, cleared. */
    private ByteBuf nextOut() {
        ByteBuf out = outs[next];
        next = next + 1 == outs.length ? 0 : next + 1;
        return out.clear();
    }

    /** A builder on {@code out} holding the batch's records, not closed. */
    private RecordBatchBuilder fill(ByteBuf out) {
        RecordBatchBuilder b = new RecordBatchBuilder(out, TIMESTAMP_MS);
        for (int i = 0; i < records; i++) {
            b.append(TIMESTAMP_MS + i, null, values[i & 15], List.of());
        }
        return b;
    }
}
