package io.stellflow.protocol.compression;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import com.github.luben.zstd.util.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * One zstd decompression context in {@code ZSTD_d_stableOutBuffer} mode, called through the FFM
 * linker on the libzstd that zstd-jni bundles and loads (the same library and build as every other
 * zstd call here; zstd-jni has no setter for that parameter). In that mode zstd writes a frame's
 * blocks straight into the caller's output, using the bytes already there as its window, so the
 * input can be given in steps and each step's output read while it is still in the CPU cache: no
 * window buffer, no copy out of it, and no second pass over a cold region (issue #21).
 *
 * <p>The contract of the mode (zstd.h, {@code ZSTD_d_stableOutBuffer}): from a frame's first call
 * to its end, every call passes the same output address and size, the position zstd left, and the
 * bytes before it unchanged; the output must hold the whole frame. {@link
 * ZstdCodec.ZstdDecompressor} keeps that contract for one frame and hands anything else to
 * zstd-jni.
 *
 * <p>Availability: {@link #open} returns null when the symbols cannot be found in the caller's
 * class loader (zstd-jni loaded elsewhere), native access is refused, or libzstd refuses the
 * parameter (before 1.4.4, where it appeared); the caller then decodes as before.
 *
 * <p>Thread-safety: confined to one owning thread; {@link #close} once.
 */
final class ZstdInPlace implements AutoCloseable {
    /** {@code ZSTD_d_windowLogMax} (zstd.h {@code ZSTD_dParameter}). */
    private static final int D_WINDOW_LOG_MAX = 100;
    /** {@code ZSTD_d_experimentalParam2}, alias {@code ZSTD_d_stableOutBuffer}. */
    private static final int D_STABLE_OUT_BUFFER = 1001;
    /** {@code ZSTD_reset_session_only}. */
    private static final int RESET_SESSION_ONLY = 1;

    /**
     * {@code ZSTD_WINDOWLOG_MAX_64}, the largest window a frame may declare: in this mode the output
     * is the window and no window buffer exists, so a lower limit would protect no memory (as in a
     * one-pass decode, which asks none).
     */
    private static final int WINDOW_LOG_LIMIT = 31;

    private static final Handles HANDLES = Handles.lookup();

    private final MemorySegment dctx;
    /** dstPos then srcPos, the {@code size_t*} arguments: 16 native bytes, freed with this object. */
    private final MemorySegment dstPosSegment = Arena.ofAuto().allocate(JAVA_LONG, 2);

    private final MemorySegment srcPosSegment = dstPosSegment.asSlice(JAVA_LONG.byteSize());
    private boolean closed;

    private ZstdInPlace(MemorySegment dctx) {
        this.dctx = dctx;
    }

    /** A new context, or null when the mode is not available here (see the class comment). */
    static ZstdInPlace open() {
        if (HANDLES == null) {
            return null;
        }
        MemorySegment dctx;
        try {
            dctx = (MemorySegment) HANDLES.create.invokeExact();
        } catch (Throwable t) {
            return null; // cannot happen with the symbol found; the streaming path stays
        }
        if (dctx.equals(MemorySegment.NULL)) {
            return null; // out of native memory: the streaming path will say so
        }
        ZstdInPlace z = new ZstdInPlace(dctx);
        boolean ok;
        try {
            ok = !z.isError((long) HANDLES.setParameter.invokeExact(dctx, D_STABLE_OUT_BUFFER, 1))
                    && !z.isError((long) HANDLES.setParameter.invokeExact(dctx, D_WINDOW_LOG_MAX, WINDOW_LOG_LIMIT));
        } catch (Throwable t) {
            ok = false;
        }
        if (!ok) {
            z.close(); // a library that refuses the parameter: no in-place reads
            return null;
        }
        return z;
    }

    /** Forgets any frame in progress (parameters stay) and zeroes both positions for the next. */
    void startFrame() {
        dstPosSegment.set(JAVA_LONG, 0, 0L);
        srcPosSegment.set(JAVA_LONG, 0, 0L);
        long rc;
        try {
            rc = (long) HANDLES.reset.invokeExact(dctx, RESET_SESSION_ONLY);
        } catch (Throwable t) {
            throw new IllegalStateException("ZSTD_DCtx_reset failed", t);
        }
        if (isError(rc)) {
            throw new IllegalStateException("ZSTD_DCtx_reset: " + errorName(rc));
        }
    }

    /**
     * One {@code ZSTD_decompressStream} call: decodes from {@code src[srcPos, srcLimit)} into {@code
     * dst[dstPos, dstSize)} and moves both positions.
     *
     * @return 0 when the frame is complete, a positive hint otherwise, or an error code ({@link
     *     #isError})
     */
    long decompress(MemorySegment dst, long dstSize, MemorySegment src, long srcLimit) {
        try {
            // Native input: an ordinary call (GC may run beside it). Heap input (tests, a heap
            // batch) needs a critical call, which holds GC off for its one step.
            return src.isNative()
                    ? (long) HANDLES.stream.invokeExact(dctx, dst, dstSize, dstPosSegment, src, srcLimit, srcPosSegment)
                    : (long) HANDLES.streamHeap.invokeExact(
                            dctx, dst, dstSize, dstPosSegment, src, srcLimit, srcPosSegment);
        } catch (Throwable t) {
            throw new IllegalStateException("ZSTD_decompressStream failed", t);
        }
    }

    /** The output position the last call left (bytes from the output's start). */
    long dstPos() {
        return dstPosSegment.get(JAVA_LONG, 0);
    }

    /** The input position the last call left. */
    long srcPos() {
        return srcPosSegment.get(JAVA_LONG, 0);
    }

    boolean isError(long code) {
        try {
            return (int) HANDLES.isError.invokeExact(code) != 0;
        } catch (Throwable t) {
            throw new IllegalStateException("ZSTD_isError failed", t);
        }
    }

    /** zstd's name for an error code. */
    String errorName(long code) {
        try {
            MemorySegment name = (MemorySegment) HANDLES.errorName.invokeExact(code);
            return name.equals(MemorySegment.NULL)
                    ? "error " + code
                    : name.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "error " + code;
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            long rc = (long) HANDLES.free.invokeExact(dctx);
        } catch (Throwable t) {
            throw new IllegalStateException("ZSTD_freeDCtx failed", t);
        }
    }

    /** The downcall handles, or null where the symbols or native access are missing. */
    private record Handles(
            MethodHandle create,
            MethodHandle free,
            MethodHandle setParameter,
            MethodHandle reset,
            MethodHandle stream,
            MethodHandle streamHeap,
            MethodHandle isError,
            MethodHandle errorName) {
        /** {@code ZSTD_decompressStream_simpleArgs(dctx, dst, dstCapacity, &dstPos, src, srcSize, &srcPos)}. */
        private static final FunctionDescriptor STREAM =
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);

        static Handles lookup() {
            try {
                Native.load(); // zstd-jni's loader: System.load into this class loader
                Linker linker = Linker.nativeLinker();
                SymbolLookup zstd = SymbolLookup.loaderLookup();
                return new Handles(
                        linker.downcallHandle(zstd.findOrThrow("ZSTD_createDCtx"), FunctionDescriptor.of(ADDRESS)),
                        linker.downcallHandle(
                                zstd.findOrThrow("ZSTD_freeDCtx"), FunctionDescriptor.of(JAVA_LONG, ADDRESS)),
                        linker.downcallHandle(
                                zstd.findOrThrow("ZSTD_DCtx_setParameter"),
                                FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT, JAVA_INT)),
                        linker.downcallHandle(
                                zstd.findOrThrow("ZSTD_DCtx_reset"),
                                FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT)),
                        linker.downcallHandle(zstd.findOrThrow("ZSTD_decompressStream_simpleArgs"), STREAM),
                        linker.downcallHandle(
                                zstd.findOrThrow("ZSTD_decompressStream_simpleArgs"),
                                STREAM,
                                Linker.Option.critical(true)),
                        linker.downcallHandle(
                                zstd.findOrThrow("ZSTD_isError"),
                                FunctionDescriptor.of(JAVA_INT, JAVA_LONG),
                                Linker.Option.critical(false)),
                        linker.downcallHandle(
                                zstd.findOrThrow("ZSTD_getErrorName"), FunctionDescriptor.of(ADDRESS, JAVA_LONG)));
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable t) {
                // No symbol in this class loader, or native access refused.
                return null;
            }
        }
    }
}
