package io.stellflow.perf.jmh.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
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
 * Recovery scan of a 1 GiB log: the real unclean-start path, {@link UnifiedLog#open} on a
 * directory without the clean-shutdown marker and without a recovery-point checkpoint, so {@code
 * LogLoader} hands every segment to {@code Recovery}: framing checks, CRC-32C over every batch,
 * offsets increasing, indexes rebuilt. One operation = one open of the whole log (single shot).
 *
 * <p>The log (default config: 1 GiB segments, 4 KiB index interval) is built once per trial from
 * 1 MiB sets of 16 KiB batches of 1 KiB records (seed 42) until the next set would pass 1 GiB, and
 * flushed, so the scans run against a warm page cache (the file fits in RAM). Scan speed = {@link
 * #logBytes} / time per op. The close after each open (trim indexes, clean marker) is outside the
 * measured time.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, batchSize = 1)
@Measurement(iterations = 5, batchSize = 1)
public class RecoveryScanBench {
    static final long LOG_BYTES = 1L << 30;
    static final int SET_BYTES = 1 << 20;

    private Path root;
    private Path dir;
    private UnifiedLog log;
    /** Size of the log in bytes (just under 1 GiB). */
    private long logBytes;

    @Setup(Level.Trial)
    public void buildLog() throws IOException {
        root = StorageBenchFiles.newScratchDir("sf-recovery-scan");
        dir = root.resolve("bench-0");
        ByteBuf set = StorageBenchFiles.recordSet(SET_BYTES, 16384, 1024, 42);
        long start = System.nanoTime();
        try (UnifiedLog built = UnifiedLog.open(dir, LogConfig.defaults())) {
            while (built.sizeInBytes() + set.readableBytes() <= LOG_BYTES) {
                built.appendAsLeader(set, 0);
            }
            built.flush();
            logBytes = built.sizeInBytes();
            System.out.printf(
                    "[recovery-scan] built %d bytes, %d segment(s), LEO %d in %d ms%n",
                    logBytes, built.segmentCount(), built.logEndOffset(), (System.nanoTime() - start) / 1_000_000);
        } finally {
            set.release();
        }
    }

    @Setup(Level.Invocation)
    public void makeUnclean() throws IOException {
        Files.deleteIfExists(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE));
        Files.deleteIfExists(dir.resolve("recovery-point"));
    }

    @Benchmark
    public long recover() throws IOException {
        log = UnifiedLog.open(dir, LogConfig.defaults());
        return log.logEndOffset();
    }

    @TearDown(Level.Invocation)
    public void closeLog() throws IOException {
        long size = log.sizeInBytes();
        log.close();
        if (size != logBytes) {
            throw new IllegalStateException("recovery dropped data: " + size + " of " + logBytes + " bytes");
        }
    }

    @TearDown(Level.Trial)
    public void deleteLog() throws IOException {
        StorageBenchFiles.deleteRecursively(root);
    }
}
