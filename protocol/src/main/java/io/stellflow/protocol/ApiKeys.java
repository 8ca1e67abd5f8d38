package io.stellflow.protocol;

/**
 * API keys of the v0 data plane ({@code docs/spec/wire-protocol.md} §5) and our additions ({@code
 * docs/protocol-additions.md}: the group APIs 20-25, DescribeLogDirs 26, DeleteRecords 27, DescribeBrokerConfigs 28, RegisterTxnPartition 29, WriteTxnMarkers 30, TxnOffsetCommit 31, ListTransactions 32, DescribeTransactions 33, DescribeProducers 34, ForwardStatus 35, DescribeControllers 60, replication from 100). Only the keys this
 * broker implements have constants.
 *
 * <p>Thread-safety: stateless, safe from any thread.
 */
public final class ApiKeys {
    public static final short API_VERSIONS = 0;
    public static final short METADATA = 1;
    public static final short PRODUCE = 2;
    public static final short FETCH = 3;
    public static final short LIST_OFFSETS = 4;
    /** OffsetCommit (§6.6); v1 adds memberId and memberEpoch (commits fenced per member epoch). */
    public static final short OFFSET_COMMIT = 5;
    /** OffsetFetch (§6.7); v1: null topics for every partition and a group-level errorCode. */
    public static final short OFFSET_FETCH = 6;
    /** FindCoordinator (§6.8): answered by any broker. */
    public static final short FIND_COORDINATOR = 7;
    /** Heartbeat (§6.9) of the classic v0 group protocol. */
    public static final short HEARTBEAT = 8;
    /** JoinGroup (§6.10) of the classic v0 group protocol: completes at once, no barrier. */
    public static final short JOIN_GROUP = 9;
    /** SyncGroup (§6.11) of the classic v0 group protocol: the response is exactly an errorCode. */
    public static final short SYNC_GROUP = 10;
    /**
     * InitProducerId (§6.12): a producer id from the answering broker's block, epoch 0, for an
     * idempotent producer (null transactionalId); a transactional id's producer id and a new epoch
     * from its transaction coordinator.
     */
    public static final short INIT_PRODUCER_ID = 11;
    /** BeginTransaction (§6.13): opens a transaction at the transactional id's coordinator. */
    public static final short BEGIN_TRANSACTION = 12;
    /** EndTransaction (§6.13): commits or aborts the open transaction. */
    public static final short END_TRANSACTION = 13;
    /**
     * ConsumerGroupHeartbeat ({@code docs/protocol-additions.md}): our group protocol, one heartbeat
     * carrying the subscription and returning the member's assignment (the KIP-848 model).
     */
    public static final short CONSUMER_GROUP_HEARTBEAT = 20;
    /** ListGroups ({@code docs/protocol-additions.md}): the groups a coordinator hosts. */
    public static final short LIST_GROUPS = 21;
    /** DescribeGroups ({@code docs/protocol-additions.md}): state, epochs, members, assignments. */
    public static final short DESCRIBE_GROUPS = 22;
    /** DeleteGroups ({@code docs/protocol-additions.md}): removes empty groups and their offsets. */
    public static final short DELETE_GROUPS = 23;
    /** OffsetDelete ({@code docs/protocol-additions.md}): removes a group's offsets of partitions. */
    public static final short OFFSET_DELETE = 24;
    /** OffsetHistory ({@code docs/protocol-additions.md}): the journal of a group's offset changes. */
    public static final short OFFSET_HISTORY = 25;
    /**
     * DescribeLogDirs ({@code docs/protocol-additions.md}): the answering broker's log dirs and the
     * size of each partition in them.
     */
    public static final short DESCRIBE_LOG_DIRS = 26;
    /**
     * DeleteRecords ({@code docs/protocol-additions.md}): raise partitions' log start offsets on their
     * leader (Kafka's key 21 is our ListGroups).
     */
    public static final short DELETE_RECORDS = 27;
    /**
     * DescribeBrokerConfigs ({@code docs/protocol-additions.md}): the answering broker's effective
     * static configuration.
     */
    public static final short DESCRIBE_BROKER_CONFIGS = 28;
    /**
     * RegisterTxnPartition ({@code docs/protocol-additions.md}, broker-to-broker): a partition leader
     * registers a partition in a transaction at its coordinator before the first transactional append.
     */
    public static final short REGISTER_TXN_PARTITION = 29;
    /**
     * WriteTxnMarkers ({@code docs/protocol-additions.md}, broker-to-broker): a transaction
     * coordinator has a partition leader append a transaction's COMMIT or ABORT markers.
     */
    public static final short WRITE_TXN_MARKERS = 30;
    /**
     * TxnOffsetCommit ({@code docs/protocol-additions.md}): a transactional producer commits a
     * group's offsets inside its transaction; the group coordinator registers itself in it.
     */
    public static final short TXN_OFFSET_COMMIT = 31;
    /** ListTransactions ({@code docs/protocol-additions.md}): the transactional ids a coordinator hosts. */
    public static final short LIST_TRANSACTIONS = 32;
    /** DescribeTransactions ({@code docs/protocol-additions.md}): a transactional id at its coordinator. */
    public static final short DESCRIBE_TRANSACTIONS = 33;
    /** DescribeProducers ({@code docs/protocol-additions.md}): a partition leader's producer state. */
    public static final short DESCRIBE_PRODUCERS = 34;
    /**
     * ForwardStatus ({@code docs/protocol-additions.md}, broker-to-broker): a transaction coordinator
     * asks the broker that forwarded a control request whether its client's connection is still open.
     */
    public static final short FORWARD_STATUS = 35;

    public static final short CREATE_TOPIC = 50;
    /**
     * DeleteTopic ({@code docs/spec/wire-protocol.md} §6.15): implemented by brokers of a cluster,
     * which forward it to the controller.
     */
    public static final short DELETE_TOPIC = 51;
    /**
     * DescribeControllers ({@code docs/protocol-additions.md}): the control-plane endpoints a broker
     * uses, so tools given broker addresses find the controllers.
     */
    public static final short DESCRIBE_CONTROLLERS = 60;
    /**
     * OffsetForLeaderEpoch (replication range 100-199, {@code docs/spec/wire-protocol.md} §5): a
     * follower asks the leader where a leader epoch ends before it truncates its log ({@code
     * docs/protocol-additions.md}).
     */
    public static final short OFFSET_FOR_LEADER_EPOCH = 100;

    private ApiKeys() {}

    /** The API name, for example {@code "Produce"}, or {@code "Unknown(<key>)"} for a key without a constant. */
    public static String name(short key) {
        return switch (key) {
            case API_VERSIONS -> "ApiVersions";
            case METADATA -> "Metadata";
            case PRODUCE -> "Produce";
            case FETCH -> "Fetch";
            case LIST_OFFSETS -> "ListOffsets";
            case OFFSET_COMMIT -> "OffsetCommit";
            case OFFSET_FETCH -> "OffsetFetch";
            case FIND_COORDINATOR -> "FindCoordinator";
            case HEARTBEAT -> "Heartbeat";
            case JOIN_GROUP -> "JoinGroup";
            case SYNC_GROUP -> "SyncGroup";
            case INIT_PRODUCER_ID -> "InitProducerId";
            case BEGIN_TRANSACTION -> "BeginTransaction";
            case END_TRANSACTION -> "EndTransaction";
            case CONSUMER_GROUP_HEARTBEAT -> "ConsumerGroupHeartbeat";
            case LIST_GROUPS -> "ListGroups";
            case DESCRIBE_GROUPS -> "DescribeGroups";
            case DELETE_GROUPS -> "DeleteGroups";
            case OFFSET_DELETE -> "OffsetDelete";
            case OFFSET_HISTORY -> "OffsetHistory";
            case DESCRIBE_LOG_DIRS -> "DescribeLogDirs";
            case DELETE_RECORDS -> "DeleteRecords";
            case DESCRIBE_BROKER_CONFIGS -> "DescribeBrokerConfigs";
            case REGISTER_TXN_PARTITION -> "RegisterTxnPartition";
            case WRITE_TXN_MARKERS -> "WriteTxnMarkers";
            case TXN_OFFSET_COMMIT -> "TxnOffsetCommit";
            case LIST_TRANSACTIONS -> "ListTransactions";
            case DESCRIBE_TRANSACTIONS -> "DescribeTransactions";
            case DESCRIBE_PRODUCERS -> "DescribeProducers";
            case FORWARD_STATUS -> "ForwardStatus";
            case CREATE_TOPIC -> "CreateTopic";
            case DELETE_TOPIC -> "DeleteTopic";
            case DESCRIBE_CONTROLLERS -> "DescribeControllers";
            case OFFSET_FOR_LEADER_EPOCH -> "OffsetForLeaderEpoch";
            default -> "Unknown(" + key + ")";
        };
    }

    /** True for the keys that have a constant in this class. */
    public static boolean isKnown(short key) {
        return key == API_VERSIONS
                || key == METADATA
                || key == PRODUCE
                || key == FETCH
                || key == LIST_OFFSETS
                || (key >= OFFSET_COMMIT && key <= END_TRANSACTION)
                || (key >= CONSUMER_GROUP_HEARTBEAT && key <= WRITE_TXN_MARKERS)
                || key == TXN_OFFSET_COMMIT
                || (key >= LIST_TRANSACTIONS && key <= FORWARD_STATUS)
                || key == CREATE_TOPIC
                || key == DELETE_TOPIC
                || key == DESCRIBE_CONTROLLERS
                || key == OFFSET_FOR_LEADER_EPOCH;
    }
}
