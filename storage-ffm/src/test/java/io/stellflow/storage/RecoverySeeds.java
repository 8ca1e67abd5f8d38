package io.stellflow.storage;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The seed corpus of the recovery fuzz target: for each {@link LogImage} variant, the directory
 * unchanged and one {@link DirMutation} program per kind of damage (a flipped byte under a CRC, a
 * torn tail, a zeroed range, a duplicated and a dropped batch, a batchLength of -8, lost and damaged
 * indexes, damaged checkpoints, leftovers of interrupted operations, a lost segment). Committed
 * under {@code src/test/resources/io/stellflow/storage/RecoveryFuzzTestInputs/recovery/};
 * {@code RecoverySeedsTest} checks the files are these bytes.
 */
final class RecoverySeeds {
    private RecoverySeeds() {}

    /** Builds a program whose file operands are names, resolved against the files at that step. */
    private static final class Program {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Program(int variant) {
            bytes.write(variant);
        }

        List<String> names() {
            return new ArrayList<>(DirMutation.apply(bytes.toByteArray()).keySet());
        }

        /** The {@code k}-th {@code .log} (negative: from the end). */
        String log(int k) {
            List<String> logs = names().stream()
                    .filter(n -> n.endsWith(LogSegment.LOG_SUFFIX))
                    .toList();
            return logs.get(k >= 0 ? k : logs.size() + k);
        }

        Program op(int op, String file, int pos, int len, int value) {
            int index = names().indexOf(file);
            if (index < 0) {
                throw new IllegalArgumentException("no file " + file);
            }
            bytes.write(op);
            bytes.write(index);
            bytes.write(pos >>> 16);
            bytes.write(pos >>> 8);
            bytes.write(pos);
            bytes.write(len >>> 8);
            bytes.write(len);
            bytes.write(value);
            return this;
        }

        byte[] bytes() {
            return bytes.toByteArray();
        }
    }

    static Map<String, byte[]> all() {
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        for (LogImage.Variant v : LogImage.Variant.values()) {
            int n = v.ordinal();
            String p = v.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + "-";
            seeds.put(p + "00-intact", new Program(n).bytes());
            Program q = new Program(n);
            seeds.put(
                    p + "01-flip-under-crc-first-segment",
                    q.op(0, q.log(0), 60, 0, 3).bytes());
            q = new Program(n);
            seeds.put(p + "02-flip-middle-segment", q.op(0, q.log(2), 200, 0, 5).bytes());
            q = new Program(n);
            int lastSize = LogImage.all().get(n).files.get(q.log(-1)).length;
            seeds.put(
                    p + "03-torn-tail", q.op(3, q.log(-1), lastSize - 30, 0, 0).bytes());
            q = new Program(n);
            seeds.put(p + "04-zeroed-range", q.op(2, q.log(1), 100, 40, 0).bytes());
            q = new Program(n);
            seeds.put(p + "05-duplicated-batch", q.op(4, q.log(2), 0, 0, 1).bytes());
            q = new Program(n);
            seeds.put(p + "06-dropped-batch", q.op(5, q.log(-1), 0, 0, 0).bytes());
            q = new Program(n);
            int second = DirMutation.batchStarts(LogImage.all().get(n).files.get(q.log(0)))
                    .get(1);
            seeds.put(
                    p + "07-batch-length-minus-8",
                    q.op(6, q.log(0), second + 4, 0, 3).bytes());
            q = new Program(n);
            String stem1 = q.log(1).replace(LogSegment.LOG_SUFFIX, "");
            String stem2 = q.log(2).replace(LogSegment.LOG_SUFFIX, "");
            q.op(7, stem1 + LogSegment.INDEX_SUFFIX, 0, 0, 0);
            seeds.put(
                    p + "08-indexes",
                    q.op(1, stem2 + LogSegment.TIME_INDEX_SUFFIX, 5, 0, 0x7f).bytes());
            q = new Program(n);
            String checkpoint = q.names().contains(LogLoader.RECOVERY_POINT_FILE)
                    ? LogLoader.RECOVERY_POINT_FILE
                    : LeaderEpochCache.FILE_NAME;
            seeds.put(p + "09-checkpoint-value", q.op(10, checkpoint, 40, 0, 0).bytes());
            q = new Program(n);
            q.op(0, LeaderEpochCache.FILE_NAME, 2, 0, 1);
            if (q.names().contains(LogLoader.LOG_START_OFFSET_FILE)) {
                q.op(10, LogLoader.LOG_START_OFFSET_FILE, 13, 0, 0);
            }
            seeds.put(p + "10-epoch-checkpoint", q.bytes());
            q = new Program(n);
            for (int kind = 0; kind < 5; kind++) {
                q.op(11, q.names().getFirst(), 0, 2, kind);
            }
            seeds.put(p + "11-leftovers", q.bytes());
            q = new Program(n);
            seeds.put(p + "12-lost-segment", q.op(7, q.log(2), 0, 0, 0).bytes());
            q = new Program(n);
            q.op(7, LeaderEpochCache.FILE_NAME, 0, 0, 0);
            seeds.put(
                    p + "13-no-epoch-file-and-bad-length",
                    q.op(6, q.log(0), second + 4, 0, 3).bytes());
        }
        return seeds;
    }
}
