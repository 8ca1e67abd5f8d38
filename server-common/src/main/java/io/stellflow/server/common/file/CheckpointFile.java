package io.stellflow.server.common.file;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The text checkpoint format of the servers' small state files: the storage's {@code recovery-point},
 * {@code log-start-offset} and {@code leader-epoch-checkpoint} of a partition directory and the
 * broker's {@code replication-offset-checkpoint} of a log dir. One format, one atomic write ({@link
 * AtomicFiles}).
 *
 * <p>Format (UTF-8, one item per line, {@code \n} line ends): line 1 is the format version {@code
 * 0}, the remaining lines are the body; what the body holds is the file's own (an offset
 * checkpoint's body is one decimal offset; a list checkpoint's body is its entry count followed by
 * one line per entry). Example {@code leader-epoch-checkpoint}: {@code "0\n2\n0 0\n3 1500\n"}.
 *
 * <p>Thread-safety: stateless; callers serialise writes to the same file.
 *
 * <p>Errors: I/O failures as {@link IOException}; a file that does not parse as {@link
 * CorruptCheckpointException} naming the file and the bad line.
 */
public final class CheckpointFile {
    /** The format version, line 1 of every checkpoint file. */
    public static final int VERSION = 0;

    /** A checkpoint file that exists but does not parse. */
    public static final class CorruptCheckpointException extends IOException {
        private static final long serialVersionUID = 1L;

        /**
         * @param file the checkpoint file
         * @param what what is wrong with it, for example {@code "bad entry line '3'"}
         */
        public CorruptCheckpointException(Path file, String what) {
            super("corrupt checkpoint file " + file + ": " + what);
        }
    }

    private CheckpointFile() {}

    /** Writes {@code body} (lines without line ends) after the version line, atomically. */
    public static void write(Path file, List<String> body) throws IOException {
        StringBuilder text = new StringBuilder().append(VERSION).append('\n');
        for (String line : body) {
            text.append(line).append('\n');
        }
        AtomicFiles.write(file, text.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The body lines of {@code file}, or null when it does not exist.
     *
     * @throws CorruptCheckpointException when the file is not UTF-8 text, or the version line is
     *     missing or not {@value #VERSION}
     */
    public static List<String> read(Path file) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (CharacterCodingException e) {
            // A damaged checkpoint is corrupt like any other bad content, not an I/O failure of the dir.
            throw new CorruptCheckpointException(file, "not UTF-8 text (" + e + ")");
        }
        if (lines.isEmpty() || !lines.getFirst().equals(String.valueOf(VERSION))) {
            throw new CorruptCheckpointException(
                    file, "version line " + (lines.isEmpty() ? "missing" : "'" + lines.getFirst() + "'"));
        }
        return new ArrayList<>(lines.subList(1, lines.size()));
    }

    /**
     * Writes a list checkpoint: the entry count, then one line per entry.
     *
     * @param entries the entry lines, without line ends
     */
    public static void writeList(Path file, List<String> entries) throws IOException {
        List<String> body = new ArrayList<>(entries.size() + 1);
        body.add(Integer.toString(entries.size()));
        body.addAll(entries);
        write(file, body);
    }

    /**
     * The entry lines of a list checkpoint written by {@link #writeList}, or null when the file does
     * not exist.
     *
     * @throws CorruptCheckpointException a missing or bad count, or a count that differs from the
     *     lines present
     */
    public static List<String> readList(Path file) throws IOException {
        List<String> body = read(file);
        if (body == null) {
            return null;
        }
        if (body.isEmpty()) {
            throw new CorruptCheckpointException(file, "missing entry count");
        }
        long count = parseLong(file, body.getFirst());
        if (count != body.size() - 1) {
            throw new CorruptCheckpointException(
                    file, "entry count " + count + " but " + (body.size() - 1) + " entry lines");
        }
        return body.subList(1, body.size());
    }

    /**
     * A decimal number of a checkpoint line (surrounding blanks ignored).
     *
     * @throws CorruptCheckpointException when it is not one, naming {@code file}
     */
    public static long parseLong(Path file, String text) throws CorruptCheckpointException {
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new CorruptCheckpointException(file, "not a number: '" + text + "'");
        }
    }
}
