package io.stellflow.perf.data;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Record values for the perf tools beyond the fixed random value: JSON log records made by {@link
 * JsonLogLines} from a seed, and payload files in the format of Kafka's {@code ProducerPerformance
 * --payload-file} (one record per line, split at {@code \n}, empty lines skipped), so both systems of
 * a lab run send the same bytes.
 *
 * <p>A JSON log record is a JSON array of whole log lines, {@code [{...},{...},{...}]}, with as many
 * lines as fit in the target size (at least one): about 3 lines and 700-1024 bytes for a 1024-byte
 * target, on one line (no {@code \n} inside), as a shipper batching log events would send them.
 *
 * <p>Thread-safety: stateless.
 */
public final class Payloads {
    private Payloads() {}

    /**
     * {@code count} JSON log records of at most {@code targetBytes} bytes each (a record whose first
     * line alone is longer holds that line), from {@code seed}: the same arguments give the same
     * bytes everywhere.
     *
     * @throws IllegalArgumentException when {@code count < 1} or {@code targetBytes < 1}
     */
    public static byte[][] jsonLogRecords(long seed, int count, int targetBytes) {
        if (count < 1 || targetBytes < 1) {
            throw new IllegalArgumentException(
                    "need count >= 1 and targetBytes >= 1, got " + count + " and " + targetBytes);
        }
        JsonLogLines lines = new JsonLogLines(seed);
        byte[][] out = new byte[count][];
        StringBuilder record = new StringBuilder(targetBytes + 512);
        String pending = strip(lines.nextLine());
        for (int i = 0; i < count; i++) {
            record.setLength(0);
            record.append('[').append(pending);
            pending = strip(lines.nextLine());
            // ASCII only (JsonLogLines writes no other characters), so chars are bytes.
            while (record.length() + 1 + pending.length() + 1 <= targetBytes) {
                record.append(',').append(pending);
                pending = strip(lines.nextLine());
            }
            record.append(']');
            out[i] = record.toString().getBytes(StandardCharsets.UTF_8);
        }
        return out;
    }

    private static String strip(String line) {
        return line.endsWith("\n") ? line.substring(0, line.length() - 1) : line;
    }

    /**
     * The records of a payload file: its lines (split at {@code \n}, a trailing {@code \r} kept as
     * data, as Kafka does), empty ones skipped.
     *
     * @throws IOException when the file cannot be read
     * @throws IllegalArgumentException naming the file when it holds no record
     */
    public static byte[][] fromFile(Path file) throws IOException {
        byte[] all = Files.readAllBytes(file);
        List<byte[]> records = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= all.length; i++) {
            if (i == all.length || all[i] == '\n') {
                if (i > start) {
                    byte[] r = new byte[i - start];
                    System.arraycopy(all, start, r, 0, r.length);
                    records.add(r);
                }
                start = i + 1;
            }
        }
        if (records.isEmpty()) {
            throw new IllegalArgumentException("payload file " + file + " holds no record (no non-empty line)");
        }
        return records.toArray(new byte[0][]);
    }

    /** Writes {@code records} one per line ({@code \n} after each); they must not contain {@code \n}. */
    public static void writeFile(Path file, byte[][] records) throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            for (byte[] r : records) {
                for (byte b : r) {
                    if (b == '\n') {
                        throw new IllegalArgumentException("a record contains a newline: cannot be a payload line");
                    }
                }
                out.write(r);
                out.write('\n');
            }
        }
    }

    /** Total bytes of {@code records}. */
    public static long totalBytes(byte[][] records) {
        long n = 0;
        for (byte[] r : records) {
            n += r.length;
        }
        return n;
    }
}
