package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The segment files of a partition directory, for tests that damage or inspect them. */
final class SegmentFiles {
    private SegmentFiles() {}

    /** The {@code <base>.log} files of {@code dir}, oldest (lowest base offset) first. */
    static List<Path> logFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(LogSegment.LOG_SUFFIX))
                    .sorted()
                    .toList();
        }
    }

    /** The base offset a {@code <base>.log} file is named after. */
    static long baseOf(Path logFile) {
        long base = LogLoader.parseBase(logFile, LogSegment.LOG_SUFFIX);
        if (base == LogLoader.NOT_A_SEGMENT_NAME) {
            throw new IllegalArgumentException("not a segment log file: " + logFile);
        }
        return base;
    }

    /**
     * Opens and closes a new log in {@code logDir}, then replaces its empty active segment file with
     * a symbolic link to Linux's always-full {@code /dev/full}: every {@code write(2)} to it fails
     * with a real {@code ENOSPC}, without a small file system. Returns the link.
     */
    static Path activeSegmentOnDevFull(Path logDir, LogEnvironment env) throws IOException {
        Path devFull = Path.of("/dev/full");
        assertThat(devFull).as("Linux's always-full device").exists();
        UnifiedLog.open(logDir, LogConfig.defaults(), env).close();
        Path active = LogSegment.logPath(logDir, 0);
        assertThat(Files.size(active)).as("a new log's active segment").isZero();
        Files.delete(active);
        Files.createSymbolicLink(active, devFull);
        return active;
    }
}
