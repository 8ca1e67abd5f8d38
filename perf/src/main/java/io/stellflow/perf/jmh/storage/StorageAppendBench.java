package io.stellflow.perf.jmh.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
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
 * Append throughput of a 1 MiB record set of 1 KiB-record batches (built with the protocol's
 * RecordBatchBuilder from seed 42), three ways in the same run, one operation = one set:
 *
 * <ul>
 *   <li>{@link #logAppend}: {@link UnifiedLog#appendAsLeader} (offset assignment, epoch stamp,
 *       index entries every 4 KiB, one gather {@code FileChannel.write} of the set; no fsync);
 *   <li>{@link #mmapCopy}: {@code MemorySegment.copy} of the same bytes into a read-write FFM
 *       mapping of a segment file ({@code FileChannel.map(..., Arena)});
 *   <li>{@link #plainWrite}: a plain sequential {@code FileChannel.write} of the same bytes.
 * </ul>
 *
 * <p>All three roll to a new file at 1 GiB (the default {@code log.segment.bytes}) and start each
 * iteration in a fresh directory that is deleted afterwards, so disk use stays bounded. No fsync:
 * this is the page-cache write path, as the broker's default flush policy. Throughput is reported
 * as ops/s (sets per second) and, through the {@code bytes} aux counter, as bytes per second.
 *
 * <p>{@code batchBytes}: 16384 = the Java producer's default batch.size (about 15 records per
 * batch, ~65 batches per set); 1048576 = one batch per set.
 *
 * <p>{@code preallocate}: {@code log.preallocate} of the {@link #logAppend} log (default true, as the
 * broker's); {@code -p preallocate=true,false} measures the reservation against the file system's
 * per-page delayed allocation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class StorageAppendBench {
    static final int SET_BYTES = 1 << 20;
    static final int VALUE_BYTES = 1024;
    static final long SEGMENT_BYTES = LogConfig.DEFAULT_SEGMENT_BYTES;

    @Param({"16384", "1048576"})
    public int batchBytes;

    @Param({"true"})
    public boolean preallocate;

    private ByteBuf set;
    private int setSize;
    private ByteBuffer plainSource;
    private MemorySegment mmapSource;

    private Path dir;
    private UnifiedLog log;
    private FileChannel plainFile;
    private long plainFileBytes;
    private int fileSeq;

    private Arena mmapArena;
    private MemorySegment mmapRegion;
    private long mmapPosition;

    /** Bytes appended in the iteration (reported per second). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    @Setup(Level.Trial)
    public void buildSet() {
        set = StorageBenchFiles.recordSet(SET_BYTES, batchBytes, VALUE_BYTES, 42);
        setSize = set.readableBytes();
        plainSource = ByteBuffer.allocateDirect(setSize);
        set.getBytes(set.readerIndex(), plainSource.duplicate());
        mmapSource = MemorySegment.ofBuffer(plainSource);
        System.out.println("[storage-append] batchBytes=" + batchBytes + " set=" + setSize + " bytes");
    }

    @Setup(Level.Iteration)
    public void openFiles() throws IOException {
        dir = StorageBenchFiles.newScratchDir("sf-storage-append");
        log = UnifiedLog.open(
                dir.resolve("bench-0"),
                LogConfig.builder().preallocate(preallocate).build());
        fileSeq = 0;
        nextPlainFile();
        nextMmapFile();
    }

    private void nextPlainFile() throws IOException {
        if (plainFile != null) {
            plainFile.close();
        }
        plainFile = FileChannel.open(
                dir.resolve("plain-" + fileSeq++ + ".log"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        plainFileBytes = 0;
    }

    private void nextMmapFile() throws IOException {
        if (mmapArena != null) {
            mmapArena.close();
        }
        mmapArena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(
                dir.resolve("mmap-" + fileSeq++ + ".log"),
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            mmapRegion = ch.map(FileChannel.MapMode.READ_WRITE, 0, SEGMENT_BYTES, mmapArena);
        }
        mmapPosition = 0;
    }

    @TearDown(Level.Iteration)
    public void deleteFiles() throws IOException {
        log.close();
        plainFile.close();
        plainFile = null;
        mmapArena.close();
        mmapArena = null;
        StorageBenchFiles.deleteRecursively(dir);
    }

    @Benchmark
    public long logAppend(Bytes counter) throws IOException {
        long base = log.appendAsLeader(set, 0);
        counter.bytes += setSize;
        return base;
    }

    @Benchmark
    public long mmapCopy(Bytes counter) throws IOException {
        if (mmapPosition + setSize > SEGMENT_BYTES) {
            nextMmapFile();
        }
        MemorySegment.copy(mmapSource, 0, mmapRegion, mmapPosition, setSize);
        mmapPosition += setSize;
        counter.bytes += setSize;
        return mmapPosition;
    }

    @Benchmark
    public long plainWrite(Bytes counter) throws IOException {
        if (plainFileBytes + setSize > SEGMENT_BYTES) {
            nextPlainFile();
        }
        ByteBuffer b = plainSource.duplicate();
        while (b.hasRemaining()) {
            plainFileBytes += plainFile.write(b);
        }
        counter.bytes += setSize;
        return plainFileBytes;
    }

    @TearDown(Level.Trial)
    public void release() {
        set.release();
    }
}
