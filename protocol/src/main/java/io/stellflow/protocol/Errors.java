package io.stellflow.protocol;

/**
 * Error codes 0..27 of the documented table (spec §8.1). Codes from 28 upward (spec §8.2) are not
 * allocated yet; v0 responses to SDK clients carry only these codes.
 *
 * <p>Thread-safety: stateless, safe from any thread.
 */
public final class Errors {
    public static final short NONE = 0;
    public static final short UNKNOWN_SERVER_ERROR = 1;
    public static final short UNSUPPORTED_VERSION = 2;
    public static final short INVALID_REQUEST = 3;
    public static final short AUTHENTICATION_FAILED = 4;
    public static final short AUTHORIZATION_FAILED = 5;
    public static final short THROTTLED = 6;
    public static final short BROKER_NOT_AVAILABLE = 7;
    public static final short LEADER_NOT_AVAILABLE = 8;
    public static final short NOT_LEADER_OR_FOLLOWER = 9;
    public static final short UNKNOWN_TOPIC_OR_PARTITION = 10;
    public static final short OFFSET_OUT_OF_RANGE = 11;
    public static final short MESSAGE_TOO_LARGE = 12;
    public static final short RECORD_LIST_TOO_LARGE = 13;
    public static final short INVALID_RECORD = 14;
    public static final short CORRUPT_MESSAGE = 15;
    public static final short COORDINATOR_NOT_AVAILABLE = 16;
    public static final short NOT_COORDINATOR = 17;
    public static final short CONCURRENT_TRANSACTIONS = 18;
    public static final short FENCED_INSTANCE_ID = 19;
    public static final short FEATURE_NOT_ENABLED = 20;
    public static final short INVALID_PRODUCER_EPOCH = 21;
    public static final short OUT_OF_ORDER_SEQUENCE_NUMBER = 22;
    public static final short DUPLICATE_SEQUENCE_NUMBER = 23;
    public static final short TRANSACTION_COORDINATOR_FENCED = 24;
    public static final short INVALID_TXN_STATE = 25;
    public static final short TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 26;
    public static final short PRODUCER_FENCED = 27;

    /** Highest code of the documented table; both SDKs read anything above as UNKNOWN_SERVER_ERROR. */
    public static final short MAX_DOCUMENTED = PRODUCER_FENCED;

    private static final String[] NAMES = {
        "NONE",
        "UNKNOWN_SERVER_ERROR",
        "UNSUPPORTED_VERSION",
        "INVALID_REQUEST",
        "AUTHENTICATION_FAILED",
        "AUTHORIZATION_FAILED",
        "THROTTLED",
        "BROKER_NOT_AVAILABLE",
        "LEADER_NOT_AVAILABLE",
        "NOT_LEADER_OR_FOLLOWER",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "OFFSET_OUT_OF_RANGE",
        "MESSAGE_TOO_LARGE",
        "RECORD_LIST_TOO_LARGE",
        "INVALID_RECORD",
        "CORRUPT_MESSAGE",
        "COORDINATOR_NOT_AVAILABLE",
        "NOT_COORDINATOR",
        "CONCURRENT_TRANSACTIONS",
        "FENCED_INSTANCE_ID",
        "FEATURE_NOT_ENABLED",
        "INVALID_PRODUCER_EPOCH",
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "DUPLICATE_SEQUENCE_NUMBER",
        "TRANSACTION_COORDINATOR_FENCED",
        "INVALID_TXN_STATE",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "PRODUCER_FENCED"
    };

    private Errors() {}

    /** The spec name of {@code code}, or {@code "UNKNOWN(<code>)"} outside 0..27. */
    public static String name(short code) {
        return code >= 0 && code < NAMES.length ? NAMES[code] : "UNKNOWN(" + code + ")";
    }
}
