package io.stellflow.server.common.file;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Classifies the {@link IOException}s of file writes, for every server module (the log's writes,
 * checkpoints, the periodic tasks of {@link FailureEpisode}).
 *
 * <p>The JDK reports {@code write(2)}, {@code fsync(2)} and {@code ftruncate(2)} failures as a
 * plain {@link IOException} whose message is the C library's {@code strerror} text (for example
 * {@code sun.nio.ch.IOUtil} on a {@code FileChannel} write), and file operations as a {@link
 * FileSystemException} whose reason is that text; neither carries the errno. So a full file system
 * is recognised by glibc's text of {@code ENOSPC} ("No space left on device") and {@code EDQUOT}
 * ("Disk quota exceeded"), which is what a JVM started in the C or any English locale sees.
 *
 * <p>Thread-safety: stateless.
 */
public final class FileErrors {
    private FileErrors() {}

    /** glibc's {@code strerror(ENOSPC)}. */
    public static final String NO_SPACE = "No space left on device";

    /** glibc's {@code strerror(EDQUOT)}. */
    public static final String QUOTA_EXCEEDED = "Disk quota exceeded";

    /**
     * The file a failure names: the file of the first {@link FileSystemException} in {@code e}'s
     * cause chain, or null.
     */
    public static String fileOf(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof FileSystemException f && f.getFile() != null) {
                return f.getFile();
            }
        }
        return null;
    }

    /**
     * The reason of a failure without the file name a {@link FileSystemException} puts in front of
     * it (for example "No space left on device"); the message of other throwables, or their class
     * name when they have none.
     */
    public static String reasonOf(Throwable e) {
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        String message = e.getMessage();
        return message != null ? message : e.getClass().getName();
    }

    /**
     * Whether {@code e}, or one of its causes, says that the file system is full or the quota is
     * used up.
     */
    public static boolean isNoSpace(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message != null && (message.contains(NO_SPACE) || message.contains(QUOTA_EXCEEDED))) {
                return true;
            }
        }
        return false;
    }

    /** Usable bytes of the file system holding {@code path}, -1 when that cannot be read. */
    public static long freeBytes(Path path) {
        try {
            return Files.getFileStore(path).getUsableSpace();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
