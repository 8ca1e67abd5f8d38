package io.stellflow.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Small text checkpoint files of a partition directory ({@code recovery-point}, {@code
 * log-start-offset}, {@code leader-epoch-checkpoint}), all in one format and all written the same
 * atomic way.
 *
 * <p>Format (UTF-8, one item per line, {@code \n} line ends): line 1 is the format version {@code
 * 0}, the remaining lines are the body. An offset checkpoint's body is one decimal offset; the
 * leader-epoch checkpoint's body is the entry count followed by {@code <epoch> <startOffset>} lines.
 * Example {@code leader-epoch-checkpoint}: {@code "0\n2\n0 0\n3 1500\n"}.
 *
 * <p>Atomic write: the body goes to {@code <file>.tmp}, which is fsynced, renamed over {@code
 * <file>} (an atomic rename on POSIX file systems), then the directory is fsynced so the rename
 * itself is durable. A crash leaves either the old or the new file, never a torn one; a leftover
 * {@code .tmp} is simply overwritten next time.
 *
 * <p>Thread-safety: stateless; callers serialize writes to the same file (the log's writer).
 *
 * <p>Errors: I/O failures as {@link IOException}; a file that does not parse as {@link
 * CorruptCheckpointException} naming the file and the bad line.
 */
final class Checkpoints {
    static final String TMP_SUFFIX = ".tmp";
    static final int VERSION = 0;

    /** A checkpoint file that exists but does not parse. */
    static final class CorruptCheckpointException extends IOException {
        private static final long serialVersionUID = 1L;

        CorruptCheckpointException(Path file, String what) {
            super("corrupt checkpoint file " + file + ": " + what);
        }
    }

    private Checkpoints() {}

    /** Writes {@code body} (lines without line ends) after the version line, atomically. */
    static void write(Path file, List<String> body) throws IOException {
        StringBuilder text = new StringBuilder().append(VERSION).append('\n');
        for (String line : body) {
            text.append(line).append('\n');
        }
        Path tmp = file.resolveSibling(file.getFileName() + TMP_SUFFIX);
        ByteBuffer bytes = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8));
        try (FileChannel ch = FileChannel.open(
                tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            while (bytes.hasRemaining()) {
                ch.write(bytes);
            }
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDir(file.getParent());
    }

    /** The body lines of {@code file}, or null when it does not exist. */
    static List<String> read(Path file) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        }
        if (lines.isEmpty() || !lines.getFirst().equals(String.valueOf(VERSION))) {
            throw new CorruptCheckpointException(
                    file, "version line " + (lines.isEmpty() ? "missing" : "'" + lines.getFirst() + "'"));
        }
        return new ArrayList<>(lines.subList(1, lines.size()));
    }

    /** Writes a single-offset checkpoint. */
    static void writeOffset(Path file, long offset) throws IOException {
        write(file, List.of(Long.toString(offset)));
    }

    /**
     * Reads a single-offset checkpoint; {@code missing} when the file does not exist.
     *
     * @throws CorruptCheckpointException the body is not exactly one offset &gt;= 0
     */
    static long readOffset(Path file, long missing) throws IOException {
        List<String> body = read(file);
        if (body == null) {
            return missing;
        }
        if (body.size() != 1) {
            throw new CorruptCheckpointException(file, "expected one offset line, found " + body.size());
        }
        long offset = parseLong(file, body.getFirst());
        if (offset < 0) {
            throw new CorruptCheckpointException(file, "negative offset " + offset);
        }
        return offset;
    }

    static long parseLong(Path file, String text) throws CorruptCheckpointException {
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new CorruptCheckpointException(file, "not a number: '" + text + "'");
        }
    }

    static void fsyncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
