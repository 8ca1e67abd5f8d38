package io.stellflow.storage;

import io.stellflow.server.common.file.FileErrors;
import java.io.IOException;

/**
 * Classifies the {@link IOException}s of log writes: the storage module's names for {@link
 * FileErrors} (which says how a full file system is recognised without an errno).
 *
 * <p>Thread-safety: stateless.
 */
public final class StorageErrors {
    private StorageErrors() {}

    /** glibc's {@code strerror(ENOSPC)}. */
    static final String NO_SPACE = FileErrors.NO_SPACE;

    /** glibc's {@code strerror(EDQUOT)}. */
    static final String QUOTA_EXCEEDED = FileErrors.QUOTA_EXCEEDED;

    /**
     * The file a write failure names: the file of the first {@link java.nio.file.FileSystemException}
     * in {@code e}'s cause chain (log writes and index allocations name theirs), or null.
     */
    public static String fileOf(Throwable e) {
        return FileErrors.fileOf(e);
    }

    /**
     * The reason of a failure without the file name a {@link java.nio.file.FileSystemException} puts
     * in front of it (for example "No space left on device"); the message of other throwables, or
     * their class name when they have none.
     */
    public static String reasonOf(Throwable e) {
        return FileErrors.reasonOf(e);
    }

    /**
     * Whether {@code e}, or one of its causes, says that the file system is full or the quota is
     * used up.
     */
    public static boolean isNoSpace(Throwable e) {
        return FileErrors.isNoSpace(e);
    }
}
