package io.stellflow.controller;

/**
 * No controller answered as the active controller before the client's deadline (all unreachable,
 * election in progress, or no quorum). The request may or may not have been applied only when the
 * last attempt reached the leader; the message says what the last attempt saw.
 */
public final class ControllerUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ControllerUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
