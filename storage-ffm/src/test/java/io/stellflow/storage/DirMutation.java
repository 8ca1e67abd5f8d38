package io.stellflow.storage;

import io.stellflow.protocol.record.RecordBatchLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Decodes a fuzz input into a mutated copy of a {@link LogImage}: byte 0 picks the variant, then
 * every 8 bytes are one mutation {@code [op, file, position (3 bytes), length (2 bytes), value]}
 * applied in order (at most {@value #MAX_OPS}; a short tail is ignored). {@code file} indexes the
 * directory's current file names in sorted order; positions and lengths are taken modulo what fits.
 *
 * <p>Operations: flip a bit, set a byte, zero a range, truncate, duplicate a batch in place (or a
 * range, when the file does not walk as batches), drop a batch, write a boundary int32, delete the
 * file, append bytes, copy a range from another file, replace a checkpoint's offset, and add a
 * leftover file of an interrupted operation ({@code .index} without a log, {@code .deleted}, {@code
 * .tmp}, a compaction {@code .cleaned}, or a {@code .log.swap} copy of a segment).
 *
 * <p>Stateless; deterministic in the input.
 */
final class DirMutation {
    static final int MAX_OPS = 8;
    static final int OP_BYTES = 8;

    private static final int[] INTS = {0, 1, -1, -8, 77, 78, 1000, Integer.MAX_VALUE, Integer.MIN_VALUE, 0x01000000};

    private DirMutation() {}

    /** The variant an input selects. */
    static LogImage image(byte[] input) {
        List<LogImage> all = LogImage.all();
        return all.get(input.length == 0 ? 0 : (input[0] & 0xFF) % all.size());
    }

    /** The mutated files (name to bytes, sorted) the input describes. */
    static Map<String, byte[]> apply(byte[] input) {
        Map<String, byte[]> files = new TreeMap<>();
        image(input).files.forEach((k, v) -> files.put(k, v.clone()));
        for (int op = 0; op < MAX_OPS && 1 + (op + 1) * OP_BYTES <= input.length; op++) {
            int at = 1 + op * OP_BYTES;
            apply(files, Arrays.copyOfRange(input, at, at + OP_BYTES));
        }
        return files;
    }

    private static void apply(Map<String, byte[]> files, byte[] op) {
        List<String> names = new ArrayList<>(files.keySet());
        if (names.isEmpty()) {
            return;
        }
        String name = names.get((op[1] & 0xFF) % names.size());
        byte[] b = files.get(name);
        int rawPos = (op[2] & 0xFF) << 16 | (op[3] & 0xFF) << 8 | (op[4] & 0xFF);
        int pos = rawPos % (b.length + 1);
        int len = (op[5] & 0xFF) << 8 | (op[6] & 0xFF);
        byte value = op[7];
        switch ((op[0] & 0xFF) % 12) {
            case 0 -> {
                if (pos < b.length) {
                    b[pos] ^= (byte) (1 << (value & 7));
                }
            }
            case 1 -> {
                if (pos < b.length) {
                    b[pos] = value;
                }
            }
            case 2 -> Arrays.fill(b, pos, Math.min(b.length, pos + len % 64 + 1), (byte) 0);
            case 3 -> files.put(name, Arrays.copyOf(b, pos));
            case 4 -> files.put(name, duplicateBatch(b, value & 0xFF, pos, len));
            case 5 -> files.put(name, dropBatch(b, value & 0xFF));
            case 6 -> {
                int v = INTS[(value & 0xFF) % INTS.length];
                for (int i = 0; i < 4 && pos + i < b.length; i++) {
                    b[pos + i] = (byte) (v >>> (24 - 8 * i));
                }
            }
            case 7 -> files.remove(name);
            case 8 -> {
                byte[] out = Arrays.copyOf(b, b.length + len % 64 + 1);
                Arrays.fill(out, b.length, out.length, value);
                files.put(name, out);
            }
            case 9 -> {
                byte[] from = files.get(names.get((value & 0xFF) % names.size()));
                int src = rawPos % (from.length + 1);
                int n = Math.min(len % 256, Math.min(from.length - src, b.length - pos));
                System.arraycopy(from, src, b, pos, Math.max(n, 0));
            }
            case 10 -> files.put(name, ("0\n" + (rawPos % 64 - 8) + "\n").getBytes(StandardCharsets.UTF_8));
            default -> addLeftover(files, names, value & 0xFF, len);
        }
    }

    private static void addLeftover(Map<String, byte[]> files, List<String> names, int kind, int which) {
        List<String> logs =
                names.stream().filter(n -> n.endsWith(LogSegment.LOG_SUFFIX)).toList();
        String log = logs.isEmpty() ? "00000000000000000000.log" : logs.get(which % logs.size());
        String stem = log.substring(0, log.length() - LogSegment.LOG_SUFFIX.length());
        switch (kind % 5) {
            case 0 -> files.put("00000000000000099999" + LogSegment.INDEX_SUFFIX, new byte[16]);
            case 1 ->
                files.put(
                        log + LogSegment.DELETED_SUFFIX,
                        files.getOrDefault(log, new byte[0]).clone());
            case 2 ->
                files.put(
                        LogLoader.RECOVERY_POINT_FILE + Checkpoints.TMP_SUFFIX,
                        "0\n1".getBytes(StandardCharsets.UTF_8));
            case 3 -> files.put(stem + LogSegment.LOG_SUFFIX + LogCleaner.CLEANED_SUFFIX, new byte[7]);
            default ->
                files.put(
                        stem + LogSegment.LOG_SUFFIX + LogCleaner.SWAP_SUFFIX,
                        files.getOrDefault(log, new byte[0]).clone());
        }
    }

    /** Start positions of the batches a {@code .log} walks as (whole, framed) batches, then its end. */
    static List<Integer> batchStarts(byte[] b) {
        List<Integer> starts = new ArrayList<>();
        int pos = 0;
        while (b.length - pos >= RecordBatchLayout.LOG_OVERHEAD) {
            int length = getInt(b, pos + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            if (length < RecordBatchLayout.MIN_BATCH_LENGTH
                    || length > b.length - pos - RecordBatchLayout.LOG_OVERHEAD) {
                break;
            }
            starts.add(pos);
            pos += RecordBatchLayout.LOG_OVERHEAD + length;
        }
        starts.add(pos);
        return starts;
    }

    private static byte[] duplicateBatch(byte[] b, int k, int pos, int len) {
        List<Integer> starts = batchStarts(b);
        int from;
        int to;
        if (starts.size() > 1) {
            int i = k % (starts.size() - 1);
            from = starts.get(i);
            to = starts.get(i + 1);
        } else {
            from = pos;
            to = Math.min(b.length, pos + len % 256);
        }
        byte[] out = new byte[b.length + to - from];
        System.arraycopy(b, 0, out, 0, to);
        System.arraycopy(b, from, out, to, to - from);
        System.arraycopy(b, to, out, 2 * to - from, b.length - to);
        return out;
    }

    private static byte[] dropBatch(byte[] b, int k) {
        List<Integer> starts = batchStarts(b);
        if (starts.size() < 2) {
            return b;
        }
        int i = k % (starts.size() - 1);
        int from = starts.get(i);
        int to = starts.get(i + 1);
        byte[] out = new byte[b.length - (to - from)];
        System.arraycopy(b, 0, out, 0, from);
        System.arraycopy(b, to, out, from, b.length - to);
        return out;
    }

    static int getInt(byte[] b, int at) {
        return (b[at] & 0xFF) << 24 | (b[at + 1] & 0xFF) << 16 | (b[at + 2] & 0xFF) << 8 | (b[at + 3] & 0xFF);
    }
}
