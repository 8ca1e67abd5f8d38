package io.stellflow.server.common.file;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Properties;

/**
 * Durable small-file writes, the one implementation every server file goes through (the broker's
 * {@code meta.properties} and partition metadata, the checkpoints of {@link CheckpointFile}, the
 * controller's metadata snapshots): the content goes to {@code <file>.tmp} in the same directory,
 * which is fsynced, renamed over {@code <file>} ({@code rename(2)}, atomic on POSIX file systems),
 * then the directory is fsynced so the rename itself is durable. A crash leaves either the old or the
 * new file, never a torn one (a stray {@code .tmp} file at worst, overwritten by the next write).
 *
 * <p>The temporary file is a sibling of the target, so the rename never crosses a file system; a
 * file system that still refuses an atomic rename fails the write ({@link
 * java.nio.file.AtomicMoveNotSupportedException}) rather than risk a window without the file.
 *
 * <p>Thread-safety: stateless; callers serialise writes to the same file.
 *
 * <p>Errors: {@link IOException} from the file system, naming the file.
 */
public final class AtomicFiles {
    /** Suffix of the temporary file written before the rename. */
    public static final String TEMP_SUFFIX = ".tmp";

    private AtomicFiles() {}

    /** Writes {@code props} in {@link Properties#store} format (UTF-8), replacing the file atomically. */
    public static void writeProperties(Path file, Properties props, String comment) throws IOException {
        StringWriter text = new StringWriter();
        props.store(text, comment);
        write(file, text.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Reads a file written by {@link #writeProperties}. */
    public static Properties readProperties(Path file) throws IOException {
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            props.load(new InputStreamReader(in, StandardCharsets.UTF_8));
        }
        return props;
    }

    /** Replaces {@code file} atomically with {@code content}. */
    public static void write(Path file, byte[] content) throws IOException {
        write(file, ByteBuffer.wrap(content));
    }

    /**
     * Replaces {@code file} atomically with the remaining bytes of {@code parts}, in order (a header
     * and a body, for example). The buffers' positions advance to their limits.
     */
    public static void write(Path file, ByteBuffer... parts) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path temp = dir.resolve(file.getFileName() + TEMP_SUFFIX);
        try (FileChannel ch = FileChannel.open(
                temp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            for (ByteBuffer part : parts) {
                while (part.hasRemaining()) {
                    ch.write(part);
                }
            }
            ch.force(true);
        } catch (IOException e) {
            throw namingFile(temp, e);
        }
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDirectory(dir);
    }

    /**
     * A write or fsync failure is a plain {@link IOException} with the C library's text (for example
     * "No space left on device") and no file: give it the file, keeping it as the cause. Subclasses
     * (an interrupt, a file-system error that names its file already) pass unchanged.
     */
    private static IOException namingFile(Path file, IOException e) {
        if (e.getClass() != IOException.class) {
            return e;
        }
        FileSystemException named = new FileSystemException(file.toString(), null, e.getMessage());
        named.initCause(e);
        return named;
    }

    /** Flushes a directory's entries (file creations, renames, deletions) to disk. */
    public static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
