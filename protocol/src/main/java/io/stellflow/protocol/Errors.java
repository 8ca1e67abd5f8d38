package io.stellflow.protocol;

/**
 * Error codes 0..27 of the documented table (spec §8.1) and the codes allocated from 28 upward (spec
 * §8.2, in allocation order; a number is never reused). A code from 28 up is sent only in responses to
 * an API version documented to carry it (CreateTopic v2 for 28..31, Produce v1 for 32..34, OffsetForLeaderEpoch for 40..41); v0 responses to SDK clients carry
 * only 0..27, using the spec's fallback column.
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
    /** Illegal topic name (empty, too long, bad characters, or a collision once '.' equals '_'); v0: 3. */
    public static final short INVALID_TOPIC = 28;
    /** CreateTopic for an existing topic with another partition count; v0: 3 (§6.14). */
    public static final short TOPIC_ALREADY_EXISTS = 29;
    /** Partition count <= 0 or above the limit; v0: 3. */
    public static final short INVALID_PARTITIONS = 30;
    /** Replication factor impossible (too few brokers, out of range); v0: 3. */
    public static final short INVALID_REPLICATION_FACTOR = 31;
    /**
     * acks=-1 and the partition's ISR is smaller than {@code min.insync.replicas}: rejected before the
     * append (nothing written); sent in Produce v1, v0: 7.
     */
    public static final short NOT_ENOUGH_REPLICAS = 32;
    /**
     * acks=-1: appended on the leader, but the ISR fell below {@code min.insync.replicas} before the
     * wait for the high watermark ended (the records may be on fewer replicas than required); sent in
     * Produce v1, v0: 7.
     */
    public static final short NOT_ENOUGH_REPLICAS_AFTER_APPEND = 33;
    /**
     * acks=-1: the high watermark did not pass the appended records within the request's timeoutMs
     * (the records stay in the leader's log); sent in Produce v1, v0: 7.
     */
    public static final short REQUEST_TIMED_OUT = 34;
    // 35..39: reserved for further replication codes.
    /**
     * The request's leader epoch is older than the leader's (a stale follower or client); sent only
     * in OffsetForLeaderEpoch (broker-to-broker); v0 fallback 9 NOT_LEADER_OR_FOLLOWER.
     */
    public static final short FENCED_LEADER_EPOCH = 40;
    /**
     * The request's leader epoch is newer than this broker knows (its metadata lags); sent only in
     * OffsetForLeaderEpoch (broker-to-broker); v0 fallback 9 NOT_LEADER_OR_FOLLOWER.
     */
    public static final short UNKNOWN_LEADER_EPOCH = 41;

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
        "PRODUCER_FENCED",
        "INVALID_TOPIC",
        "TOPIC_ALREADY_EXISTS",
        "INVALID_PARTITIONS",
        "INVALID_REPLICATION_FACTOR",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "REQUEST_TIMED_OUT",
        null, // 35..39 reserved
        null,
        null,
        null,
        null,
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH"
    };

    private Errors() {}

    /** Highest allocated code. */
    public static final short MAX_ALLOCATED = UNKNOWN_LEADER_EPOCH;

    /**
     * The code a response version that predates {@code code} carries instead (spec §8.2 fallback
     * column): 28..31 become {@link #INVALID_REQUEST}, 32..34 {@link #BROKER_NOT_AVAILABLE} (which both
     * SDK producers retry), 40..41 {@link #NOT_LEADER_OR_FOLLOWER}; codes 0..27 are returned unchanged.
     */
    public static short v0Fallback(short code) {
        if (code >= INVALID_TOPIC && code <= INVALID_REPLICATION_FACTOR) {
            return INVALID_REQUEST;
        }
        if (code >= NOT_ENOUGH_REPLICAS && code <= REQUEST_TIMED_OUT) {
            return BROKER_NOT_AVAILABLE;
        }
        if (code == FENCED_LEADER_EPOCH || code == UNKNOWN_LEADER_EPOCH) {
            return NOT_LEADER_OR_FOLLOWER;
        }
        return code;
    }

    /** The spec name of {@code code}, or {@code "UNKNOWN(<code>)"} for a code not allocated (below 0, a reserved gap, above {@link #MAX_ALLOCATED}). */
    public static String name(short code) {
        return code >= 0 && code < NAMES.length && NAMES[code] != null ? NAMES[code] : "UNKNOWN(" + code + ")";
    }
}
