package io.stellflow.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves what recovery cannot read out of a partition's log, never deleting it: the bytes from the
 * first invalid batch to the end of its segment are copied to {@code <stem>.log.tail-<position>},
 * every later segment's files ({@code .log}, {@code .index}, {@code .timeindex}) are renamed, all
 * into one new directory beside the partition directory: {@code <topic>-<partition>.<epochMillis>.quarantine}
 * ({@link #dirName}). That name does not end in {@code -<digits>}, so neither the log manager nor
 * the replica manager loads it as a partition, and retention, compaction and topic deletion (which
 * work inside partition directories) never touch it. The caller then truncates the segment at the
 * position.
 *
 * <p>Crash safety: the tail copy is fsynced before anything is renamed, both directories are fsynced
 * after the renames, and the caller truncates only after that. A crash in between leaves the
 * corruption in place, and the next open quarantines again into a new directory (a duplicate tail
 * copy at worst, never a loss).
 *
 * <p>Thread-safety: called only while the log is being opened, by the opening thread. Errors: any
 * {@link IOException} is thrown to the opener (the log then fails to open, nothing is truncated).
 */
final class SegmentQuarantine {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentQuarantine.class);

    /** Last part of a quarantine directory's name. */
    static final String DIR_SUFFIX = ".quarantine";

    /** Infix of the file holding a corrupt segment's tail: {@code <stem>.log.tail-<position>}. */
    static final String TAIL_INFIX = ".tail-";

    private SegmentQuarantine() {}

    /** {@code <partitionDirName>.<epochMillis>.quarantine}. */
    static String dirName(String partitionDirName, long epochMillis) {
        return partitionDirName + "." + epochMillis + DIR_SUFFIX;
    }

    /** True for a directory name made by {@link #dirName} (never a partition directory's name). */
    static boolean isQuarantineDir(String name) {
        return name.endsWith(DIR_SUFFIX);
    }

    /**
     * Copies the tail of {@code corrupt} from {@code position} and moves the segments with the given
     * bases into a new quarantine directory beside {@code partitionDir}.
     *
     * @param nowMs wall clock (epoch ms) naming the directory; the next free millisecond is used
     *     when that name exists
     * @param corrupt the open segment holding the invalid batch
     * @param position where the invalid batch starts in {@code corrupt}
     * @param reason why it is invalid
     * @param laterBases base offsets of every segment after {@code corrupt}, ascending
     */
    static Quarantined move(
            Path partitionDir, long nowMs, LogSegment corrupt, int position, String reason, long[] laterBases)
            throws IOException {
        Path qdir = createDir(partitionDir, nowMs);
        List<String> files = new ArrayList<>();
        int segments = 0;
        long bytes = 0;
        long tailBytes = corrupt.log.size() - position;
        if (tailBytes > 0) {
            String name = corrupt.logFile.getFileName() + TAIL_INFIX + position;
            try (FileChannel out =
                    FileChannel.open(qdir.resolve(name), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                long copied = 0;
                while (copied < tailBytes) {
                    copied += corrupt.log.transferTo(position + copied, tailBytes - copied, out);
                }
                out.force(true);
            }
            files.add(name);
            segments++;
            bytes += tailBytes;
        }
        for (long base : laterBases) {
            Path log = LogSegment.logPath(partitionDir, base);
            bytes += Files.size(log);
            segments++;
            for (Path f : new Path[] {
                log,
                LogSegment.indexPath(partitionDir, base),
                LogSegment.timeIndexPath(partitionDir, base),
                AbortedTxnIndex.path(partitionDir, base)
            }) {
                if (Files.exists(f)) {
                    Files.move(f, qdir.resolve(f.getFileName()), StandardCopyOption.ATOMIC_MOVE);
                    files.add(f.getFileName().toString());
                }
            }
        }
        Checkpoints.fsyncDir(qdir);
        Checkpoints.fsyncDir(partitionDir);
        Checkpoints.fsyncDir(qdir.getParent());
        LOG.info("Moved {} of {} to {}", files, partitionDir, qdir);
        return new Quarantined(partitionDir, corrupt.logFile, position, reason, qdir, files, segments, bytes);
    }

    private static Path createDir(Path partitionDir, long nowMs) throws IOException {
        String name = partitionDir.getFileName().toString();
        for (long ms = nowMs; ; ms++) {
            try {
                return Files.createDirectory(partitionDir.resolveSibling(dirName(name, ms)));
            } catch (FileAlreadyExistsException e) {
                // another quarantine of this partition in the same millisecond: take the next one
            }
        }
    }
}
