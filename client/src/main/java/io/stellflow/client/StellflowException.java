package io.stellflow.client;

import io.stellflow.protocol.Errors;

/**
 * A request failed with a protocol error code (spec section 8), or could not reach a broker.
 * Thrown directly by blocking calls or used to complete futures exceptionally.
 */
public final class StellflowException extends RuntimeException {
    /** Error code used for local failures (connection lost, timeout): not a wire code. */
    public static final short NETWORK_ERROR = -1;

    private final short errorCode;

    public StellflowException(short errorCode, String message) {
        super(message + " (" + codeName(errorCode) + ")");
        this.errorCode = errorCode;
    }

    public StellflowException(short errorCode, String message, Throwable cause) {
        super(message + " (" + codeName(errorCode) + ")", cause);
        this.errorCode = errorCode;
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
     * Codes the clients retry: network errors, 7, 8, 9 and 10 (spec section 8.1), and the acks=-1
     * outcomes of Produce v1 (docs/protocol-additions.md): 32 NOT_ENOUGH_REPLICAS, 33
     * NOT_ENOUGH_REPLICAS_AFTER_APPEND and 34 REQUEST_TIMED_OUT (the ISR may grow back or catch up;
     * a retry of 33 or 34 may duplicate records, as in Kafka without idempotence).
     */
    public static boolean isRetriable(short code) {
        return code == NETWORK_ERROR
                || code == Errors.BROKER_NOT_AVAILABLE
                || code == Errors.LEADER_NOT_AVAILABLE
                || code == Errors.NOT_LEADER_OR_FOLLOWER
                || code == Errors.UNKNOWN_TOPIC_OR_PARTITION
                || code == Errors.NOT_ENOUGH_REPLICAS
                || code == Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                || code == Errors.REQUEST_TIMED_OUT;
    }

    private static String codeName(short code) {
        return code == NETWORK_ERROR ? "NETWORK_ERROR" : Errors.name(code) + " " + code;
    }
}
