package io.stellflow.client;

import io.stellflow.protocol.Errors;

/**
 * A request failed with a protocol error code ({@code docs/spec/wire-protocol.md} §8), or could not
 * reach a broker. Thrown directly by blocking calls or used to complete futures exceptionally.
 * Subclasses name outcomes an application handles apart ({@link ProducerFencedException}, {@link
 * TransactionAbortedException}).
 */
public class StellflowException extends RuntimeException {
    /** Error code used for local failures (connection lost, timeout): not a wire code. */
    public static final short NETWORK_ERROR = -1;

    private final short errorCode;
    private final String reason;

    public StellflowException(short errorCode, String message) {
        super(message + " (" + codeName(errorCode) + ")");
        this.errorCode = errorCode;
        this.reason = message;
    }

    public StellflowException(short errorCode, String message, Throwable cause) {
        super(message + " (" + codeName(errorCode) + ")", cause);
        this.errorCode = errorCode;
        this.reason = message;
    }

    /**
     * The message without the {@code (CODE n)} suffix {@link #getMessage} adds: for an error that
     * quotes this one and carries its code again, so the code is said once.
     */
    public String reason() {
        return reason;
    }

    /** The protocol error code, or {@link #NETWORK_ERROR} for local transport failures. */
    public short errorCode() {
        return errorCode;
    }

    /** True when retrying after a metadata refresh and a back-off may succeed. */
    public boolean retriable() {
        return isRetriable(errorCode);
    }

    /**
     * Codes the clients retry: network errors and the codes the error table marks retriable ({@link
     * Errors#isRetriable}: 7, 8, 9 and 10 of {@code docs/spec/wire-protocol.md} §8.1, the acks=-1
     * outcomes 32, 33 and 34 of Produce v1, docs/protocol-additions.md).
     */
    public static boolean isRetriable(short code) {
        return code == NETWORK_ERROR || Errors.isRetriable(code);
    }

    private static String codeName(short code) {
        return code == NETWORK_ERROR ? "NETWORK_ERROR" : Errors.name(code) + " " + code;
    }
}
