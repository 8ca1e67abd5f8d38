package io.stellflow.storage;

import io.stellflow.server.common.file.AtomicFiles;
import io.stellflow.server.common.file.CheckpointFile;
import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The small checkpoint files of a partition directory ({@code recovery-point}, {@code
 * log-start-offset}, {@code leader-epoch-checkpoint}), all in the servers' one checkpoint format and
 * written the same atomic way ({@link CheckpointFile}, {@link AtomicFiles}: temp file, fsync,
 * rename, fsync of the directory). An offset checkpoint's body is one decimal offset; the
 * leader-epoch checkpoint's body is the entry count followed by {@code <epoch> <startOffset>} lines
 * ({@link LeaderEpochCache}).
 *
 * <p>Thread-safety: stateless; callers serialize writes to the same file (the log's writer).
 *
 * <p>Errors: I/O failures as {@link IOException}; a file that does not parse as {@link
 * CorruptCheckpointException} naming the file and the bad line.
 */
final class Checkpoints {
    static final String TMP_SUFFIX = AtomicFiles.TEMP_SUFFIX;

    private Checkpoints() {}

    /** Writes {@code body} (lines without line ends) after the version line, atomically. */
    static void write(Path file, List<String> body) throws IOException {
        CheckpointFile.write(file, body);
    }

    /** The body lines of {@code file}, or null when it does not exist. */
    static List<String> read(Path file) throws IOException {
        return CheckpointFile.read(file);
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
        return CheckpointFile.parseLong(file, text);
    }

    static void fsyncDir(Path dir) throws IOException {
        AtomicFiles.fsyncDirectory(dir);
    }
}
