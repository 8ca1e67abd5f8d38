package io.stellflow.protocol;

/**
 * A request or response that violates the wire contract, carrying the error code to answer with
 * (usually {@link Errors#INVALID_REQUEST}, {@link Errors#UNSUPPORTED_VERSION} for a bad header
 * version, {@link Errors#CORRUPT_MESSAGE} or {@link Errors#INVALID_RECORD} from record decoding).
 *
 * <p>Stack traces are not filled in: a malformed frame from a client is an expected outcome for the
 * broker, which answers header-only and keeps the connection ({@code docs/spec/wire-protocol.md}
 * §1.3), so it must be cheap.
 */
public final class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final short errorCode;

    public ProtocolException(short errorCode, String msg) {
        super(msg, null, false, false);
        this.errorCode = errorCode;
    }

    /** The {@code docs/spec/wire-protocol.md} §8 error code that describes the failure. */
    public short errorCode() {
        return errorCode;
    }

    @Override
    public String toString() {
        return "ProtocolException[" + Errors.name(errorCode) + "]: " + getMessage();
    }
}
