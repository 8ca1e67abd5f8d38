package io.stellflow.broker.coordinator;

import io.stellflow.protocol.Errors;

/**
 * Why a coordinator command was not answered by its shard: the future of {@link
 * CoordinatorRuntime#submit} or {@link CoordinatorRuntime#read} completes exceptionally with this,
 * and the handler answers {@link #errorCode()} (a client retries both, after looking the coordinator
 * up again with FindCoordinator).
 *
 * <ul>
 *   <li>{@link Errors#NOT_COORDINATOR} (17): this broker does not lead the group's partition (never
 *       did, or lost it; the records of a write may be truncated by the new leader).
 *   <li>{@link Errors#COORDINATOR_NOT_AVAILABLE} (16): it leads it but is still loading it, the
 *       append failed (the shard is reloaded from the log), the high watermark did not pass the
 *       write within {@code offsets.commit.timeout.ms}, or the ISR fell below {@code
 *       min.insync.replicas} while it waited; the runtime is closing.
 * </ul>
 *
 * An expected outcome, not a bug: it carries no stack trace.
 */
public final class CoordinatorException extends RuntimeException {
    private final short errorCode;

    /**
     * @param errorCode {@link Errors#NOT_COORDINATOR} or {@link Errors#COORDINATOR_NOT_AVAILABLE}
     * @param message what happened, for logs
     */
    public CoordinatorException(short errorCode, String message) {
        super(Errors.name(errorCode) + ": " + message, null, false, false);
        this.errorCode = errorCode;
    }

    /** The wire error code to answer. */
    public short errorCode() {
        return errorCode;
    }

    /**
     * The error code to answer for a failed command's {@code throwable}: this exception's code, the
     * cause's when it is one wrapped by a {@code CompletionException}, else {@link
     * Errors#UNKNOWN_SERVER_ERROR} (a bug in the shard, logged by the caller).
     */
    public static short errorCodeOf(Throwable throwable) {
        Throwable t = throwable;
        while (t != null) {
            if (t instanceof CoordinatorException c) {
                return c.errorCode;
            }
            t = t.getCause();
        }
        return Errors.UNKNOWN_SERVER_ERROR;
    }
}
