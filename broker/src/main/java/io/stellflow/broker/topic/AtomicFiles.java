package io.stellflow.broker.topic;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Properties;

/**
 * Durable small-file writes: temp file, fsync, atomic rename, fsync of the directory. A crash leaves
 * either the old or the new file, never a torn one (a stray {@code .tmp} file at worst).
 *
 * <p>Thread-safety: stateless; callers serialise writes to the same file.
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
        Path dir = file.toAbsolutePath().getParent();
        Path temp = dir.resolve(file.getFileName() + TEMP_SUFFIX);
        try (FileChannel ch = FileChannel.open(
                temp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        try {
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
        }
        fsyncDirectory(dir);
    }

    /** Flushes a directory's entries (file creations, renames) to disk. */
    public static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
