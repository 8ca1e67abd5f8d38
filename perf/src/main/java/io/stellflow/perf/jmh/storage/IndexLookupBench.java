package io.stellflow.perf.jmh.storage;

import io.stellflow.storage.LogConfig;
import io.stellflow.storage.OffsetIndexLayout;
import io.stellflow.storage.TimeIndexLayout;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
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
 * Lookups in a FULL offset index (10 MiB = 1,310,720 entries, the default {@code
 * log.index.size.max.bytes}) and a full time index (1,310,721 entries of 12 bytes = 15 MiB), with
 * 65,536 random targets from seed 7 visited in a fixed order. One operation = one lookup.
 *
 * <p>Per index, four variants over the same file:
 *
 * <ul>
 *   <li>{@code *FfmIndex}: the production {@code OffsetIndex.lookup} / {@code TimeIndex.lookup}
 *       (FFM {@code MemorySegment} mapped into a shared Arena, big-endian {@code ValueLayout}s, plus
 *       the read side of the index's {@code ReentrantReadWriteLock}). These classes are
 *       package-private in {@code io.stellflow.storage}, so they are reached through {@code
 *       MethodHandles.privateLookupIn} handles held in static finals (inlined by the JIT).
 *   <li>{@code *MbbLocked}: the same binary search over a read-only {@link MappedByteBuffer} of the
 *       same file, taking the same kind of read lock: the like-for-like baseline of the production
 *       path.
 *   <li>{@code *FfmRaw} and {@code *MbbRaw}: the bare binary search over a {@code MemorySegment}
 *       and over a {@code MappedByteBuffer}, without the lock: the access API alone.
 * </ul>
 *
 * <p>The index files are written in the layouts of {@link OffsetIndexLayout} and {@link
 * TimeIndexLayout} (synthetic but valid, strictly increasing entries) and opened with the
 * production {@code openExisting}; the setup checks that all four variants agree on every target.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class IndexLookupBench {
    static final int INDEX_MAX_BYTES = LogConfig.DEFAULT_INDEX_MAX_BYTES;
    static final int OFFSET_ENTRIES = INDEX_MAX_BYTES / OffsetIndexLayout.ENTRY_SIZE;
    static final int TIME_ENTRIES = TimeIndexLayout.maxEntriesFor(INDEX_MAX_BYTES);
    static final long BASE_OFFSET = 1_000_000_000L;
    static final int REL_OFFSET_STEP = 16;
    static final int POSITION_STEP = 1024;
    static final long TS_STEP_MS = 10;
    static final int TARGETS = 1 << 16;

    private static final MethodHandle OFFSET_OPEN;
    private static final MethodHandle OFFSET_LOOKUP;
    private static final MethodHandle TIME_OPEN;
    private static final MethodHandle TIME_LOOKUP;
    private static final MethodHandle CLOSE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(
                    Class.forName("io.stellflow.storage.OffsetIndex"), MethodHandles.lookup());
            Class<?> offsetIndex = Class.forName("io.stellflow.storage.OffsetIndex");
            Class<?> timeIndex = Class.forName("io.stellflow.storage.TimeIndex");
            Class<?> mappedIndex = Class.forName("io.stellflow.storage.MappedIndex");
            MethodType openType = MethodType.methodType(Object.class, Path.class, long.class, int.class, boolean.class);
            OFFSET_OPEN = l.findStatic(
                            offsetIndex,
                            "openExisting",
                            MethodType.methodType(offsetIndex, Path.class, long.class, int.class, boolean.class))
                    .asType(openType);
            TIME_OPEN = l.findStatic(
                            timeIndex,
                            "openExisting",
                            MethodType.methodType(timeIndex, Path.class, long.class, int.class, boolean.class))
                    .asType(openType);
            OFFSET_LOOKUP = l.findVirtual(offsetIndex, "lookup", MethodType.methodType(int.class, long.class))
                    .asType(MethodType.methodType(int.class, Object.class, long.class));
            TIME_LOOKUP = l.findVirtual(timeIndex, "lookup", MethodType.methodType(long.class, long.class))
                    .asType(MethodType.methodType(long.class, Object.class, long.class));
            CLOSE = l.findVirtual(mappedIndex, "close", MethodType.methodType(void.class))
                    .asType(MethodType.methodType(void.class, Object.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Path dir;
    private Object offsetIndex;
    private Object timeIndex;
    private Arena arena;
    private MemorySegment offsetSegment;
    private MemorySegment timeSegment;
    private MappedByteBuffer offsetBuffer;
    private MappedByteBuffer timeBuffer;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private long[] offsetTargets;
    private long[] timeTargets;
    private int next;

    @Setup
    public void setUp() throws Throwable {
        dir = StorageBenchFiles.newScratchDir("sf-index-lookup");
        Path offsetFile = dir.resolve("00000000001000000000.index");
        Path timeFile = dir.resolve("00000000001000000000.timeindex");
        writeOffsetIndex(offsetFile);
        writeTimeIndex(timeFile);

        offsetIndex = (Object) OFFSET_OPEN.invokeExact(offsetFile, BASE_OFFSET, INDEX_MAX_BYTES, false);
        timeIndex = (Object) TIME_OPEN.invokeExact(timeFile, BASE_OFFSET, INDEX_MAX_BYTES, false);
        if (offsetIndex == null || timeIndex == null) {
            throw new IllegalStateException("the production index refused the benchmark files");
        }
        arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(offsetFile, StandardOpenOption.READ)) {
            offsetSegment = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            offsetBuffer = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
        }
        try (FileChannel ch = FileChannel.open(timeFile, StandardOpenOption.READ)) {
            timeSegment = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            timeBuffer = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
        }
        offsetBuffer.order(ByteOrder.BIG_ENDIAN);
        timeBuffer.order(ByteOrder.BIG_ENDIAN);

        SplittableRandom random = new SplittableRandom(7);
        offsetTargets = new long[TARGETS];
        timeTargets = new long[TARGETS];
        long offsetSpan = (long) OFFSET_ENTRIES * REL_OFFSET_STEP;
        long firstTs = StorageBenchFiles.BASE_TIMESTAMP_MS;
        long timeSpan = TIME_ENTRIES * TS_STEP_MS;
        for (int i = 0; i < TARGETS; i++) {
            offsetTargets[i] = BASE_OFFSET + random.nextLong(offsetSpan);
            timeTargets[i] = firstTs - 5 + random.nextLong(timeSpan + 10);
        }
        for (int i = 0; i < TARGETS; i++) {
            long[] results = new long[8];
            next = i;
            results[0] = offsetFfmIndex();
            next = i;
            results[1] = offsetFfmRaw();
            next = i;
            results[2] = offsetMbbRaw();
            next = i;
            results[3] = offsetMbbLocked();
            next = i;
            results[4] = timeFfmIndex();
            next = i;
            results[5] = timeFfmRaw();
            next = i;
            results[6] = timeMbbRaw();
            next = i;
            results[7] = timeMbbLocked();
            if (results[0] != results[1]
                    || results[1] != results[2]
                    || results[2] != results[3]
                    || results[4] != results[5]
                    || results[5] != results[6]
                    || results[6] != results[7]) {
                throw new IllegalStateException(
                        "variants disagree on target " + i + ": " + java.util.Arrays.toString(results));
            }
        }
        next = 0;
    }

    private static void writeOffsetIndex(Path file) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(OFFSET_ENTRIES * OffsetIndexLayout.ENTRY_SIZE);
        for (int i = 0; i < OFFSET_ENTRIES; i++) {
            buf.putInt(i * REL_OFFSET_STEP).putInt(i * POSITION_STEP);
        }
        writeAll(file, buf.flip());
    }

    private static void writeTimeIndex(Path file) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(TIME_ENTRIES * TimeIndexLayout.ENTRY_SIZE);
        for (int i = 0; i < TIME_ENTRIES; i++) {
            buf.putLong(StorageBenchFiles.BASE_TIMESTAMP_MS + i * TS_STEP_MS).putInt(i * REL_OFFSET_STEP);
        }
        writeAll(file, buf.flip());
    }

    private static void writeAll(Path file, ByteBuffer buf) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
        }
    }

    @TearDown
    public void tearDown() throws Throwable {
        CLOSE.invokeExact(offsetIndex);
        CLOSE.invokeExact(timeIndex);
        arena.close();
        offsetBuffer = null;
        timeBuffer = null;
        StorageBenchFiles.deleteRecursively(dir);
    }

    private long nextOffsetTarget() {
        long t = offsetTargets[next];
        next = (next + 1) & (TARGETS - 1);
        return t;
    }

    private long nextTimeTarget() {
        long t = timeTargets[next];
        next = (next + 1) & (TARGETS - 1);
        return t;
    }

    // ---- offset index: relative offset -> position ------------------------------------------

    @Benchmark
    public int offsetFfmIndex() throws Throwable {
        return (int) OFFSET_LOOKUP.invokeExact(offsetIndex, nextOffsetTarget());
    }

    @Benchmark
    public int offsetFfmRaw() {
        return ffmOffsetSearch(offsetSegment, nextOffsetTarget());
    }

    @Benchmark
    public int offsetMbbRaw() {
        return mbbOffsetSearch(offsetBuffer, nextOffsetTarget());
    }

    @Benchmark
    public int offsetMbbLocked() {
        long target = nextOffsetTarget();
        lock.readLock().lock();
        try {
            return mbbOffsetSearch(offsetBuffer, target);
        } finally {
            lock.readLock().unlock();
        }
    }

    private static int ffmOffsetSearch(MemorySegment m, long targetOffset) {
        long rel = targetOffset - BASE_OFFSET;
        if (rel < 0) {
            return 0;
        }
        int target = rel > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) rel;
        int lo = 0;
        int hi = (int) (m.byteSize() / OffsetIndexLayout.ENTRY_SIZE) - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (m.get(OffsetIndexLayout.INT_BE, OffsetIndexLayout.entryOffset(mid)) <= target) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0
                ? 0
                : m.get(
                        OffsetIndexLayout.INT_BE,
                        OffsetIndexLayout.entryOffset(found) + OffsetIndexLayout.POSITION_OFFSET);
    }

    private static int mbbOffsetSearch(ByteBuffer b, long targetOffset) {
        long rel = targetOffset - BASE_OFFSET;
        if (rel < 0) {
            return 0;
        }
        int target = rel > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) rel;
        int lo = 0;
        int hi = b.capacity() / OffsetIndexLayout.ENTRY_SIZE - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (b.getInt(mid * OffsetIndexLayout.ENTRY_SIZE) <= target) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0 ? 0 : b.getInt(found * OffsetIndexLayout.ENTRY_SIZE + OffsetIndexLayout.POSITION_OFFSET);
    }

    // ---- time index: timestamp -> offset ----------------------------------------------------

    @Benchmark
    public long timeFfmIndex() throws Throwable {
        return (long) TIME_LOOKUP.invokeExact(timeIndex, nextTimeTarget());
    }

    @Benchmark
    public long timeFfmRaw() {
        return ffmTimeSearch(timeSegment, nextTimeTarget());
    }

    @Benchmark
    public long timeMbbRaw() {
        return mbbTimeSearch(timeBuffer, nextTimeTarget());
    }

    @Benchmark
    public long timeMbbLocked() {
        long target = nextTimeTarget();
        lock.readLock().lock();
        try {
            return mbbTimeSearch(timeBuffer, target);
        } finally {
            lock.readLock().unlock();
        }
    }

    private static long ffmTimeSearch(MemorySegment m, long targetMs) {
        int lo = 0;
        int hi = (int) (m.byteSize() / TimeIndexLayout.ENTRY_SIZE) - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (m.get(TimeIndexLayout.LONG_BE, TimeIndexLayout.entryOffset(mid)) <= targetMs) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0
                ? BASE_OFFSET
                : BASE_OFFSET
                        + m.get(
                                TimeIndexLayout.INT_BE,
                                TimeIndexLayout.entryOffset(found) + TimeIndexLayout.RELATIVE_OFFSET_OFFSET);
    }

    private static long mbbTimeSearch(ByteBuffer b, long targetMs) {
        int lo = 0;
        int hi = b.capacity() / TimeIndexLayout.ENTRY_SIZE - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (b.getLong(mid * TimeIndexLayout.ENTRY_SIZE) <= targetMs) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0
                ? BASE_OFFSET
                : BASE_OFFSET + b.getInt(found * TimeIndexLayout.ENTRY_SIZE + TimeIndexLayout.RELATIVE_OFFSET_OFFSET);
    }
}
