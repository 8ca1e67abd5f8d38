package io.stellflow.storage;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * Allocates the blocks of a file range on disk before it is memory-mapped, so a later write into
 * the mapping never needs a block the file system cannot give (a fault, {@code SIGBUS}, which the
 * JVM reports as an {@link InternalError} at an arbitrary index append, on the writer thread).
 * A full file system then fails here, at index creation or segment roll, as an {@link
 * IOException}.
 *
 * <p>How: on 64-bit Linux, {@code fallocate(2)} (mode 0: allocate and extend the size, existing
 * bytes unchanged) through the FFM {@link Linker}; where the file system does not support it
 * ({@code EOPNOTSUPP}), where the symbol is missing (other systems), or where native access is not
 * possible, an explicit write of zeros over the range past the bytes to keep, which makes the file
 * system allocate it just the same (slower: one 64 KiB write per 64 KiB).
 *
 * <p>{@link #preallocate} reserves blocks past the end of a segment's log without changing its size
 * ({@code fallocate(2)} with {@code FALLOC_FL_KEEP_SIZE}), so buffered appends into that range skip
 * the file system's delayed-allocation bookkeeping; {@link #trimPastSize} gives the unused blocks
 * back ({@code ftruncate(2)} to the current size). Both only where the native path is available.
 *
 * <p>Errors: a failed allocation is a {@link FileSystemException} naming the file, whose reason is
 * the C library's {@code strerror} text (so {@link StorageErrors#isNoSpace} recognises {@code
 * ENOSPC}); a partly allocated range stays allocated (the caller trims or deletes the file).
 *
 * <p>Thread-safety: stateless; the native handles are looked up once.
 */
final class FileAllocator {
    /** Linux {@code EINTR}. */
    static final int EINTR = 4;

    /** Linux {@code EOPNOTSUPP} (the file system cannot fallocate). */
    static final int EOPNOTSUPP = 95;

    /** Linux {@code FALLOC_FL_KEEP_SIZE}: allocate blocks, leave the file's size as it is. */
    static final int FALLOC_FL_KEEP_SIZE = 0x01;

    /** Linux {@code O_RDWR | O_CLOEXEC} (x86-64 and aarch64 share these values). */
    private static final int O_RDWR_CLOEXEC = 0x2 | 0x80000;

    /** Zeros written per call by the fallback: 64 KiB, 16 pages, one buffer per call of allocate. */
    private static final int ZERO_CHUNK_BYTES = 64 << 10;

    private static final Native NATIVE = Native.lookup();

    private FileAllocator() {}

    /**
     * Makes sure bytes {@code [0, sizeBytes)} of {@code file} are allocated on disk; the file's size
     * becomes at least {@code sizeBytes}. Bytes below {@code keepBytes} hold data and are never
     * written; bytes above it may be zeroed.
     *
     * @param file an existing file
     * @param keepBytes bytes at the start that hold data ({@code 0 <= keepBytes <= sizeBytes})
     * @param sizeBytes the size to allocate
     * @throws IOException the file system could not allocate (full, quota, I/O error)
     */
    static void allocate(Path file, long keepBytes, long sizeBytes) throws IOException {
        if (keepBytes < 0 || keepBytes > sizeBytes) {
            throw new IllegalArgumentException("keepBytes " + keepBytes + " outside [0, " + sizeBytes + "]");
        }
        if (sizeBytes == 0) {
            return;
        }
        if (NATIVE == null || !NATIVE.fallocate(file, 0, 0, sizeBytes)) {
            writeZeros(file, keepBytes, sizeBytes);
        }
    }

    /**
     * Allocates the blocks of bytes {@code [offsetBytes, offsetBytes + lengthBytes)} of {@code file}
     * without changing its size ({@code FALLOC_FL_KEEP_SIZE}): a later write into the range, past the
     * current end, needs no new block. Blocks already allocated are left as they are.
     *
     * @return true when the range is allocated; false when this platform or file system cannot
     *     (no native path, {@code EOPNOTSUPP}): nothing was changed
     * @throws IOException the file system could not allocate (full, quota, I/O error): a {@link
     *     FileSystemException} naming the file; blocks allocated before the error may stay past the
     *     end until {@link #trimPastSize}
     */
    static boolean preallocate(Path file, long offsetBytes, long lengthBytes) throws IOException {
        if (offsetBytes < 0 || lengthBytes <= 0) {
            throw new IllegalArgumentException("range [" + offsetBytes + ", +" + lengthBytes + ") of " + file);
        }
        return NATIVE != null && NATIVE.fallocate(file, FALLOC_FL_KEEP_SIZE, offsetBytes, lengthBytes);
    }

    /**
     * Frees every block of {@code file} past byte {@code sizeBytes}, which must be the file's current
     * size ({@code ftruncate(2)} to the size it has: bytes are never cut, blocks preallocated past the
     * end are given back).
     *
     * @return false when there is no native path here (nothing was changed)
     * @throws IOException the file could not be opened or truncated, naming the file
     */
    static boolean trimPastSize(Path file, long sizeBytes) throws IOException {
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("size " + sizeBytes + " of " + file);
        }
        return NATIVE != null && NATIVE.ftruncate(file, sizeBytes);
    }

    /** Whether the native {@code fallocate(2)} path is available here (tests and diagnostics). */
    static boolean nativeAvailable() {
        return NATIVE != null;
    }

    /**
     * The fallback: writes zeros over {@code [keepBytes, sizeBytes)}. A write is what makes the file
     * system allocate (a mapping or {@code ftruncate} would leave a hole). Package-private for tests.
     */
    static void writeZeros(Path file, long keepBytes, long sizeBytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(ZERO_CHUNK_BYTES, sizeBytes - keepBytes));
            long position = keepBytes;
            while (position < sizeBytes) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), sizeBytes - position));
                while (zeros.hasRemaining()) {
                    position += ch.write(zeros, position);
                }
            }
        } catch (FileSystemException e) {
            throw e;
        } catch (IOException e) {
            throw failure(file, e.getMessage(), e);
        }
    }

    static FileSystemException failure(Path file, String reason, Throwable cause) {
        FileSystemException e = new FileSystemException(file.toString(), null, reason);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /** The downcall handles; null where there is no 64-bit Linux C library to call. */
    private record Native(
            MethodHandle open,
            MethodHandle fallocate,
            MethodHandle ftruncate,
            MethodHandle close,
            MethodHandle strerror) {
        private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
        private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

        static Native lookup() {
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            if (!os.contains("linux") || ADDRESS.byteSize() != 8) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                Linker.Option errno = Linker.Option.captureCallState("errno");
                MethodHandle open = linker.downcallHandle(
                        libc.findOrThrow("open"),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                        errno,
                        Linker.Option.firstVariadicArg(2));
                MethodHandle fallocate = linker.downcallHandle(
                        libc.findOrThrow("fallocate"),
                        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG),
                        errno);
                MethodHandle ftruncate = linker.downcallHandle(
                        libc.findOrThrow("ftruncate"), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), errno);
                MethodHandle close =
                        linker.downcallHandle(libc.findOrThrow("close"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
                MethodHandle strerror =
                        linker.downcallHandle(libc.findOrThrow("strerror"), FunctionDescriptor.of(ADDRESS, JAVA_INT));
                return new Native(open, fallocate, ftruncate, close, strerror);
            } catch (RuntimeException | LinkageError e) {
                // No symbol, or native access refused (--illegal-native-access=deny): the fallback.
                return null;
            }
        }

        /**
         * {@code fallocate(fd, mode, offsetBytes, lengthBytes)}, retried on {@code EINTR}. Returns
         * false when the file system does not support it ({@code EOPNOTSUPP}).
         */
        boolean fallocate(Path file, int mode, long offsetBytes, long lengthBytes) throws IOException {
            return call(file, (state, fd) -> (int) fallocate.invokeExact(state, fd, mode, offsetBytes, lengthBytes));
        }

        /** {@code ftruncate(fd, sizeBytes)}, retried on {@code EINTR}; false on {@code EOPNOTSUPP}. */
        boolean ftruncate(Path file, long sizeBytes) throws IOException {
            return call(file, (state, fd) -> (int) ftruncate.invokeExact(state, fd, sizeBytes));
        }

        /** One call on a file descriptor of {@code file}: errno captured in {@code state}. */
        private interface FdCall {
            int apply(MemorySegment state, int fd) throws Throwable;
        }

        /**
         * Opens {@code file}, makes {@code fdCall} until it returns 0 or fails with an error other
         * than {@code EINTR}, closes. Returns false on {@code EOPNOTSUPP}; other errors throw.
         */
        private boolean call(Path file, FdCall fdCall) throws IOException {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(CALL_STATE);
                MemorySegment path = arena.allocateFrom(file.toString());
                int fd = (int) open.invokeExact(state, path, O_RDWR_CLOEXEC, 0);
                if (fd < 0) {
                    throw failure(file, message((int) ERRNO.get(state, 0L)), null);
                }
                try {
                    while (true) {
                        if (fdCall.apply(state, fd) == 0) {
                            return true;
                        }
                        int err = (int) ERRNO.get(state, 0L);
                        if (err == EOPNOTSUPP) {
                            return false;
                        }
                        if (err != EINTR) {
                            throw failure(file, message(err), null);
                        }
                    }
                } finally {
                    // A close error after fallocate or ftruncate changes nothing on disk: not checked.
                    int closed = (int) close.invokeExact(fd);
                }
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("native call failed for " + file, t);
            }
        }

        private String message(int errno) throws Throwable {
            MemorySegment text = (MemorySegment) strerror.invokeExact(errno);
            return text.equals(MemorySegment.NULL)
                    ? "errno " + errno
                    : text.reinterpret(Integer.MAX_VALUE).getString(0);
        }
    }
}
