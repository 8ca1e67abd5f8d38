package io.stellflow.storage;

/**
 * Thrown by {@link UnifiedLog#appendAsLeader} when a record set is well formed but the log's
 * configuration does not accept it: on a compacted log ({@code cleanup.policy} containing {@code
 * compact}) every record needs a non-null key. Nothing was written and the log stays writable. The
 * broker answers the partition with {@code INVALID_RECORD} (14).
 *
 * <p>Thread-safety: immutable.
 */
public final class InvalidRecordException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InvalidRecordException(String message) {
        super(message);
    }
}
