package io.stellflow.protocol;

import java.util.ArrayList;
import java.util.List;

/**
 * Error codes 0..27 of the documented table ({@code docs/spec/wire-protocol.md} §8.1) and the codes
 * allocated from 28 upward (spec §8.2, in allocation order; a number is never reused). A code from
 * 28 up is sent only in responses to an API version documented to carry it (CreateTopic v2 for
 * 28..31, Produce v1 for 32..34, OffsetForLeaderEpoch for 40..41, OffsetCommit v1, OffsetFetch v1
 * and the group APIs 20..25 for 42..51); v0 responses to SDK clients carry only 0..27, using the
 * spec's fallback column.
 *
 * <p>This is the one error table (code, name, retriable, stale metadata, v0 fallback; {@link
 * #entries}): the clients and the replica fetcher ask it whether to retry, the broker asks it for
 * the fallback of an older response version. {@code ErrorsTableTest} checks it against the spec's
 * §8.1 and §8.2 tables and {@code docs/protocol-additions.md}.
 *
 * <p>Thread-safety: immutable after class initialisation, safe from any thread.
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
    /**
     * CreateTopic for an existing topic with another partition count; v0: 3 ({@code
     * docs/spec/wire-protocol.md} §6.14).
     */
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
    /**
     * The memberId is not a member of the group (evicted, left, or never joined); the member must
     * rejoin with epoch 0. Sent in ConsumerGroupHeartbeat, OffsetCommit v1; v0 fallback 1 (spec
     * §8.2, on which the Go SDK rejoins).
     */
    public static final short UNKNOWN_MEMBER_ID = 42;
    /**
     * The member epoch is not one the coordinator can accept (older than the member's, or the
     * member was fenced): the member must drop its partitions and rejoin with epoch 0. Sent in
     * ConsumerGroupHeartbeat, OffsetCommit v1; v0 fallback 1.
     */
    public static final short FENCED_MEMBER_EPOCH = 43;
    /**
     * OffsetCommit v1 with a member epoch older than the member's current one for a partition it
     * still owns: retry once the next heartbeat brought the new epoch. Sent in OffsetCommit v1; v0
     * fallback 1.
     */
    public static final short STALE_MEMBER_EPOCH = 44;
    /**
     * The coordinator has no such group. Sent in the group APIs 20..25 and OffsetFetch v1 (never for
     * an unknown group in OffsetFetch v0, spec §6.7); v0 fallback 1 (Heartbeat, SyncGroup).
     */
    public static final short GROUP_ID_NOT_FOUND = 45;
    /** DeleteGroups of a group that still has members; v0 fallback 3. */
    public static final short NON_EMPTY_GROUP = 46;
    /**
     * A static member (group.instance.id) joins while another member with the same instance id is
     * still in the group; sent in ConsumerGroupHeartbeat; v0 fallback 19 FENCED_INSTANCE_ID.
     */
    public static final short UNRELEASED_INSTANCE_ID = 47;
    /** OffsetDelete of a partition a member of the group is assigned; sent in OffsetDelete; v0 fallback 3. */
    public static final short GROUP_SUBSCRIBED_TO_TOPIC = 48;
    /** ConsumerGroupHeartbeat names a server assignor the broker does not have; v0 fallback 3. */
    public static final short UNSUPPORTED_ASSIGNOR = 49;
    /**
     * The group has {@code group.max.size} members: the join is refused. Sent in
     * ConsumerGroupHeartbeat; v0 fallback 3 (JoinGroup v0).
     */
    public static final short GROUP_MAX_SIZE_REACHED = 50;
    /**
     * Reserved for a later classic-protocol version: a stale generationId in Heartbeat or SyncGroup.
     * v0 answers 1 instead, as the spec says (§6.9, §8.2).
     */
    public static final short ILLEGAL_GENERATION = 51;

    /** Highest code of the documented table; both SDKs read anything above as UNKNOWN_SERVER_ERROR. */
    public static final short MAX_DOCUMENTED = PRODUCER_FENCED;

    /** Highest allocated code. */
    public static final short MAX_ALLOCATED = ILLEGAL_GENERATION;

    /**
     * One row of the error table.
     *
     * @param code the wire code
     * @param name the spec name ({@code docs/spec/wire-protocol.md} §8.1, §8.2)
     * @param retriable whether Stellflow's clients and the replica fetcher retry the request after a
     *     back-off (and, the clients, a metadata refresh); for 0..27 it is the spec's "Java retries"
     *     column
     * @param staleMetadata whether the code says the sender's view of leaders, epochs or topics is out
     *     of date (retriable once metadata catches up): 8, 9, 10, 40, 41
     * @param v0Fallback the code sent instead in a response version that predates this code (§8.2
     *     fallback column); the code itself for 0..27
     */
    public record Entry(short code, String name, boolean retriable, boolean staleMetadata, short v0Fallback) {}

    /** The table, indexed by code; null for a reserved gap (35..39). */
    private static final Entry[] TABLE = new Entry[MAX_ALLOCATED + 1];

    private static final List<Entry> ENTRIES;

    static {
        plain(NONE, "NONE");
        plain(UNKNOWN_SERVER_ERROR, "UNKNOWN_SERVER_ERROR");
        plain(UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION");
        plain(INVALID_REQUEST, "INVALID_REQUEST");
        plain(AUTHENTICATION_FAILED, "AUTHENTICATION_FAILED");
        plain(AUTHORIZATION_FAILED, "AUTHORIZATION_FAILED");
        plain(THROTTLED, "THROTTLED");
        add(BROKER_NOT_AVAILABLE, "BROKER_NOT_AVAILABLE", true, false, BROKER_NOT_AVAILABLE);
        add(LEADER_NOT_AVAILABLE, "LEADER_NOT_AVAILABLE", true, true, LEADER_NOT_AVAILABLE);
        add(NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER", true, true, NOT_LEADER_OR_FOLLOWER);
        add(UNKNOWN_TOPIC_OR_PARTITION, "UNKNOWN_TOPIC_OR_PARTITION", true, true, UNKNOWN_TOPIC_OR_PARTITION);
        plain(OFFSET_OUT_OF_RANGE, "OFFSET_OUT_OF_RANGE");
        plain(MESSAGE_TOO_LARGE, "MESSAGE_TOO_LARGE");
        plain(RECORD_LIST_TOO_LARGE, "RECORD_LIST_TOO_LARGE");
        plain(INVALID_RECORD, "INVALID_RECORD");
        plain(CORRUPT_MESSAGE, "CORRUPT_MESSAGE");
        plain(COORDINATOR_NOT_AVAILABLE, "COORDINATOR_NOT_AVAILABLE");
        plain(NOT_COORDINATOR, "NOT_COORDINATOR");
        plain(CONCURRENT_TRANSACTIONS, "CONCURRENT_TRANSACTIONS");
        plain(FENCED_INSTANCE_ID, "FENCED_INSTANCE_ID");
        plain(FEATURE_NOT_ENABLED, "FEATURE_NOT_ENABLED");
        plain(INVALID_PRODUCER_EPOCH, "INVALID_PRODUCER_EPOCH");
        plain(OUT_OF_ORDER_SEQUENCE_NUMBER, "OUT_OF_ORDER_SEQUENCE_NUMBER");
        plain(DUPLICATE_SEQUENCE_NUMBER, "DUPLICATE_SEQUENCE_NUMBER");
        plain(TRANSACTION_COORDINATOR_FENCED, "TRANSACTION_COORDINATOR_FENCED");
        plain(INVALID_TXN_STATE, "INVALID_TXN_STATE");
        plain(TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED");
        plain(PRODUCER_FENCED, "PRODUCER_FENCED");
        add(INVALID_TOPIC, "INVALID_TOPIC", false, false, INVALID_REQUEST);
        add(TOPIC_ALREADY_EXISTS, "TOPIC_ALREADY_EXISTS", false, false, INVALID_REQUEST);
        add(INVALID_PARTITIONS, "INVALID_PARTITIONS", false, false, INVALID_REQUEST);
        add(INVALID_REPLICATION_FACTOR, "INVALID_REPLICATION_FACTOR", false, false, INVALID_REQUEST);
        // The ISR may grow back or catch up; a retry of 33 or 34 may duplicate records (as in Kafka
        // without idempotence).
        add(NOT_ENOUGH_REPLICAS, "NOT_ENOUGH_REPLICAS", true, false, BROKER_NOT_AVAILABLE);
        add(NOT_ENOUGH_REPLICAS_AFTER_APPEND, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true, false, BROKER_NOT_AVAILABLE);
        add(REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", true, false, BROKER_NOT_AVAILABLE);
        add(FENCED_LEADER_EPOCH, "FENCED_LEADER_EPOCH", true, true, NOT_LEADER_OR_FOLLOWER);
        add(UNKNOWN_LEADER_EPOCH, "UNKNOWN_LEADER_EPOCH", true, true, NOT_LEADER_OR_FOLLOWER);
        // Group codes: a member must rejoin (not retry) on 42 and 43; 44 clears with the next
        // heartbeat's epoch, so a commit retried after it may succeed.
        add(UNKNOWN_MEMBER_ID, "UNKNOWN_MEMBER_ID", false, false, UNKNOWN_SERVER_ERROR);
        add(FENCED_MEMBER_EPOCH, "FENCED_MEMBER_EPOCH", false, false, UNKNOWN_SERVER_ERROR);
        add(STALE_MEMBER_EPOCH, "STALE_MEMBER_EPOCH", true, false, UNKNOWN_SERVER_ERROR);
        add(GROUP_ID_NOT_FOUND, "GROUP_ID_NOT_FOUND", false, false, UNKNOWN_SERVER_ERROR);
        add(NON_EMPTY_GROUP, "NON_EMPTY_GROUP", false, false, INVALID_REQUEST);
        add(UNRELEASED_INSTANCE_ID, "UNRELEASED_INSTANCE_ID", false, false, FENCED_INSTANCE_ID);
        add(GROUP_SUBSCRIBED_TO_TOPIC, "GROUP_SUBSCRIBED_TO_TOPIC", false, false, INVALID_REQUEST);
        add(UNSUPPORTED_ASSIGNOR, "UNSUPPORTED_ASSIGNOR", false, false, INVALID_REQUEST);
        add(GROUP_MAX_SIZE_REACHED, "GROUP_MAX_SIZE_REACHED", false, false, INVALID_REQUEST);
        add(ILLEGAL_GENERATION, "ILLEGAL_GENERATION", false, false, UNKNOWN_SERVER_ERROR);
        List<Entry> entries = new ArrayList<>();
        for (Entry e : TABLE) {
            if (e != null) {
                entries.add(e);
            }
        }
        ENTRIES = List.copyOf(entries);
    }

    private Errors() {}

    private static void plain(short code, String name) {
        add(code, name, false, false, code);
    }

    private static void add(short code, String name, boolean retriable, boolean staleMetadata, short v0Fallback) {
        if (TABLE[code] != null) {
            throw new IllegalStateException("error code " + code + " allocated twice");
        }
        TABLE[code] = new Entry(code, name, retriable, staleMetadata, v0Fallback);
    }

    /** Every allocated code, in code order. */
    public static List<Entry> entries() {
        return ENTRIES;
    }

    /** The row of {@code code}, or null for a code not allocated (below 0, a reserved gap, above {@link #MAX_ALLOCATED}). */
    public static Entry entry(short code) {
        return code >= 0 && code < TABLE.length ? TABLE[code] : null;
    }

    /**
     * Whether a request that failed with {@code code} may succeed when retried after a back-off (the
     * table's retriable column; false for a code not allocated). No allocation: hot-path safe.
     */
    public static boolean isRetriable(short code) {
        Entry e = entry(code);
        return e != null && e.retriable();
    }

    /**
     * Whether {@code code} says the sender's metadata (leader, leader epoch, topic) is stale: 8, 9,
     * 10, 40, 41. Every such code is also retriable.
     */
    public static boolean isStaleMetadata(short code) {
        Entry e = entry(code);
        return e != null && e.staleMetadata();
    }

    /**
     * The code a response version that predates {@code code} carries instead ({@code
     * docs/spec/wire-protocol.md} §8.2 fallback column): 28..31 become {@link #INVALID_REQUEST},
     * 32..34 {@link #BROKER_NOT_AVAILABLE} (which both SDK producers retry), 40..41 {@link
     * #NOT_LEADER_OR_FOLLOWER}, the group codes 42..51 {@link #UNKNOWN_SERVER_ERROR}, {@link
     * #INVALID_REQUEST} or {@link #FENCED_INSTANCE_ID} (see each); codes 0..27 and codes not
     * allocated are returned unchanged.
     */
    public static short v0Fallback(short code) {
        Entry e = entry(code);
        return e != null ? e.v0Fallback() : code;
    }

    /** The spec name of {@code code}, or {@code "UNKNOWN(<code>)"} for a code not allocated (below 0, a reserved gap, above {@link #MAX_ALLOCATED}). */
    public static String name(short code) {
        Entry e = entry(code);
        return e != null ? e.name() : "UNKNOWN(" + code + ")";
    }
}
