package io.stellflow.storage;

import java.nio.file.Path;
import java.util.List;

/**
 * What recovery moved out of a partition's log because it found corruption ({@link
 * LogMetrics#logQuarantined}): the bytes after the first invalid batch of {@code file} and every later
 * segment, now in {@code quarantineDir} beside the partition directory. Nothing of it was deleted.
 *
 * @param partitionDir the partition directory ({@code <topic>-<partition>})
 * @param file the segment log file holding the first invalid batch
 * @param position byte position of that batch in {@code file} (the log keeps {@code [0, position)})
 * @param reason why the batch is invalid (e.g. {@code CRC-32C mismatch})
 * @param quarantineDir the directory the files went to ({@link SegmentQuarantine#dirName})
 * @param files the files now in {@code quarantineDir}, in order (file names only)
 * @param segments segments that lost bytes to the quarantine: the one holding the invalid batch
 *     (when its tail was not empty) plus every later one
 * @param bytes log bytes moved (tail plus later segment logs; index files not counted)
 */
public record Quarantined(
        Path partitionDir,
        Path file,
        long position,
        String reason,
        Path quarantineDir,
        List<String> files,
        int segments,
        long bytes) {
    public Quarantined {
        files = List.copyOf(files);
    }
}
