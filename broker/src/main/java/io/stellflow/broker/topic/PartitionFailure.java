package io.stellflow.broker.topic;

/**
 * Why a partition stopped taking writes on this broker: the first write (leader append, follower
 * append) that failed with an I/O error or a {@link Throwable} the writer did not expect. Set once
 * per episode ({@link Partition#markFailed}), cleared when the partition recovers in place ({@link
 * Partition#recoverInPlace}); the hook on which log-dir failure handling and in-place recovery
 * build (issue #23, points 2 and 3).
 *
 * @param operation what failed: {@code append} (leader) or {@code follower-append}
 * @param file the file the error names, or null when it names none
 * @param reason the error's reason ({@code strerror} text or the throwable's message)
 * @param error the class of the throwable ({@code java.io.IOException}, {@code
 *     java.lang.InternalError}, ...)
 * @param atMs when it failed, ms since the epoch
 * @param noSpace the file system was full ({@code ENOSPC}/{@code EDQUOT}, {@link
 *     io.stellflow.storage.StorageErrors#isNoSpace}): not a dead disk, {@link DiskFullRecovery}
 *     recovers the partition in place once space is free; other failures take the partition's log
 *     dir offline ({@link LogDirFailures}) until a restart
 */
public record PartitionFailure(String operation, String file, String reason, String error, long atMs, boolean noSpace) {
    /** The {@link #operation} of a partition failed because its log dir went offline ({@link LogDirFailures}). */
    public static final String LOG_DIR_OFFLINE = "log-dir-offline";

    /** Whether the partition failed because its log dir is offline: it is not served at all, reads included. */
    public boolean logDirOffline() {
        return LOG_DIR_OFFLINE.equals(operation);
    }
}
