package io.stellflow.protocol;

/**
 * API keys of the v0 data plane ({@code docs/spec/wire-protocol.md} §5). Only the keys this broker
 * implements have constants.
 *
 * <p>Thread-safety: stateless, safe from any thread.
 */
public final class ApiKeys {
    public static final short API_VERSIONS = 0;
    public static final short METADATA = 1;
    public static final short PRODUCE = 2;
    public static final short FETCH = 3;
    public static final short LIST_OFFSETS = 4;
    public static final short CREATE_TOPIC = 50;
    /**
     * DeleteTopic ({@code docs/spec/wire-protocol.md} §6.15): implemented by brokers of a cluster,
     * which forward it to the controller.
     */
    public static final short DELETE_TOPIC = 51;
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
            case CREATE_TOPIC -> "CreateTopic";
            case DELETE_TOPIC -> "DeleteTopic";
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
                || key == CREATE_TOPIC
                || key == DELETE_TOPIC
                || key == OFFSET_FOR_LEADER_EPOCH;
    }
}
