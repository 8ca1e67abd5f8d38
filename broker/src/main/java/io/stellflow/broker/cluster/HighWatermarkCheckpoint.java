package io.stellflow.broker.cluster;

import io.stellflow.broker.topic.Partition;
import io.stellflow.server.common.file.CheckpointFile;
import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import io.stellflow.server.common.file.FailureEpisode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code replication-offset-checkpoint} file of each log dir: the high watermark of every
 * partition hosted in that dir, written periodically ({@code
 * replica.high.watermark.checkpoint.interval.ms}) and on clean shutdown, read once at start. A
 * restarted broker starts each partition's HW from here (clamped to its log), so consumers never see
 * offsets above a HW that was persisted, and the HW does not fall back to 0.
 *
 * <p>Format (UTF-8 text, {@code \n} line ends, Kafka's layout): line 1 the format version {@code 0},
 * line 2 the entry count, then one {@code <topic> <partition> <highWatermark>} line per partition
 * (topic names have no spaces). Example: {@code "0\n2\norders 0 1500\norders 1 1498\n"}.
 *
 * <p>The servers' list checkpoint format ({@link CheckpointFile}), written atomically: temp file, fsync,
 * rename, fsync of the dir; a crash leaves the old or the new file.
 *
 * <p>Thread-safety: {@link #write} from one thread at a time (the checkpoint task, then shutdown);
 * {@link #readAll} before any write.
 *
 * <p>Errors: an unreadable or corrupt file is logged and skipped at start (its partitions start at
 * HW 0, the safe side: the HW only rises again as followers fetch); a failed write is reported to
 * the caller's {@link FailureEpisode} and retried at the next interval.
 */
public final class HighWatermarkCheckpoint {
    private static final Logger LOG = LoggerFactory.getLogger(HighWatermarkCheckpoint.class);

    /** The file name in each log dir. */
    public static final String FILE_NAME = "replication-offset-checkpoint";

    private HighWatermarkCheckpoint() {}

    /**
     * Reads every log dir's checkpoint.
     *
     * @return HW per partition directory name ({@code <topic>-<partition>}); empty when there is none
     */
    public static Map<String, Long> readAll(List<Path> logDirs) {
        Map<String, Long> all = new HashMap<>();
        for (Path dir : logDirs) {
            Path file = dir.resolve(FILE_NAME);
            try {
                all.putAll(read(file));
            } catch (IOException | RuntimeException e) {
                LOG.error("Unreadable {} ({}); its partitions start with high watermark 0", file, e.toString());
            }
        }
        return all;
    }

    /** One file's entries; empty when it does not exist. */
    static Map<String, Long> read(Path file) throws IOException {
        List<String> lines = CheckpointFile.readList(file);
        if (lines == null) {
            return Map.of();
        }
        Map<String, Long> entries = new LinkedHashMap<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            if (f.length != 3) {
                throw new CorruptCheckpointException(file, "bad entry line '" + line + "'");
            }
            entries.put(f[0] + "-" + CheckpointFile.parseLong(file, f[1]), CheckpointFile.parseLong(file, f[2]));
        }
        return entries;
    }

    /**
     * Writes the HW of every partition {@code partitions} visits into the checkpoint of the log dir
     * holding its log; every dir of {@code logDirs} gets a file (empty when it hosts nothing). A dir
     * whose write fails is reported to {@code failures} (its episode: one WARN line for the first
     * failure, later ones counted) and retried at the next call; a call that wrote every dir ends the
     * episode. Never throws for an I/O failure.
     *
     * @return the number of partitions written
     */
    public static int write(List<Path> logDirs, Consumer<Consumer<Partition>> partitions, FailureEpisode failures) {
        Map<Path, List<String>> byDir = new LinkedHashMap<>();
        for (Path dir : logDirs) {
            byDir.put(dir.toAbsolutePath().normalize(), new ArrayList<>());
        }
        int[] written = {0};
        partitions.accept(p -> {
            Path dir = p.log().dir().toAbsolutePath().normalize().getParent();
            List<String> lines = byDir.computeIfAbsent(dir, d -> new ArrayList<>());
            lines.add(p.topic() + " " + p.partition() + " " + p.highWatermark());
            written[0]++;
        });
        boolean failed = false;
        for (Map.Entry<Path, List<String>> e : byDir.entrySet()) {
            Path file = e.getKey().resolve(FILE_NAME);
            try {
                CheckpointFile.writeList(file, e.getValue());
            } catch (IOException | RuntimeException ex) {
                // A full disk fails this every interval until space is freed: one line per episode.
                failed = true;
                failures.failed(e.getKey(), file, ex);
            }
        }
        if (!failed) {
            failures.succeeded();
        }
        return written[0];
    }
}
