package io.stellflow.broker;

import io.stellflow.server.common.config.ConfigException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An exclusive OS file lock on {@code <logDir>/.lock}, so two brokers never write the same logs.
 *
 * <p>Thread-safety: {@link #release} is idempotent and synchronized.
 */
final class LogDirLock {
    private static final Logger LOG = LoggerFactory.getLogger(LogDirLock.class);

    static final String FILE_NAME = ".lock";

    private final Path file;
    private final FileChannel channel;
    private FileLock lock;

    private LogDirLock(Path file, FileChannel channel, FileLock lock) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Creates the log dir if needed and locks it.
     *
     * @throws IOException when the directory cannot be created or another process (or broker in this
     *     JVM) holds the lock
     */
    static LogDirLock acquire(Path logDir) throws IOException {
        Path file = logDir.resolve(FILE_NAME);
        FileChannel channel;
        try {
            Files.createDirectories(logDir);
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (FileSystemException e) {
            throw unusable(logDir, e);
        }
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        if (lock == null) {
            channel.close();
            throw new IOException("Log directory " + logDir + " is in use by another broker (" + file + " is locked)");
        }
        return new LogDirLock(file, channel, lock);
    }

    /**
     * The start error of a log dir that cannot be created or written: {@code log.dirs}, the dir, what
     * the system said about which file, and what to do (instead of a bare {@code
     * FileAlreadyExistsException} or {@code AccessDeniedException} with a stack trace).
     */
    static ConfigException unusable(Path logDir, FileSystemException e) {
        String what;
        if (e instanceof FileAlreadyExistsException || e instanceof NotDirectoryException) {
            what = (e.getFile() == null ? logDir.toString() : e.getFile())
                    + " is a file, not a directory: point log.dirs at a directory (it is created if missing)";
        } else if (e instanceof AccessDeniedException) {
            what = "permission denied on " + e.getFile() + ": make it writable by the broker's user, or point"
                    + " log.dirs at a writable directory";
        } else {
            what = (e.getReason() == null ? e.getClass().getSimpleName() : e.getReason()) + " on " + e.getFile()
                    + ": point log.dirs at a directory this process can create and write";
        }
        ConfigException c = new ConfigException("log.dirs", logDir.toString(), "cannot be used: " + what);
        c.initCause(e);
        return c;
    }

    /**
     * Locks every dir of {@code logDirs} (in order); on failure releases the ones already taken.
     *
     * @throws IOException as {@link #acquire(Path)}
     */
    static List<LogDirLock> acquireAll(List<Path> logDirs) throws IOException {
        List<LogDirLock> locks = new ArrayList<>();
        try {
            for (Path dir : logDirs) {
                locks.add(acquire(dir));
            }
        } catch (IOException | RuntimeException e) {
            releaseAll(locks);
            throw e;
        }
        return locks;
    }

    /** Releases every lock of {@code locks}. */
    static void releaseAll(List<LogDirLock> locks) {
        for (LogDirLock lock : locks) {
            lock.release();
        }
    }

    synchronized void release() {
        if (lock == null) {
            return;
        }
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            // The lock dies with the channel or the process anyway; nothing more to do.
            LOG.warn("Releasing {} failed: {}", file, e.toString());
        }
        lock = null;
    }
}
