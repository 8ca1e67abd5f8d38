package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DeleteGroupsRequest;
import io.stellflow.protocol.message.DeleteGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsRequest;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.ListGroupsRequest;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.OffsetDeleteResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetHistoryRequest;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Consumer-group administration ({@code docs/protocol-additions.md}, apiKeys 21-25, OffsetFetch and
 * OffsetCommit v1), obtained from {@link StellflowAdmin#groups()}. Every call but {@link #listGroups}
 * goes to the group's coordinator, found with FindCoordinator and looked up again on
 * NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE ({@link AdminGroupCalls}).
 *
 * <p>Errors: a group-level refusal throws {@link StellflowException} with the code (45
 * GROUP_ID_NOT_FOUND, 46 NON_EMPTY_GROUP, 16/17 once the retries ran out, 2 UNSUPPORTED_VERSION from a
 * broker without group support); per-partition results are returned, not thrown.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class AdminGroups {
    /** Orders partitions by topic, then partition number. */
    public static final Comparator<TopicPartition> PARTITION_ORDER =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    private final AdminGroupCalls calls;
    private final GroupLag.LogEnds logEnds;

    AdminGroups(AdminGroupCalls calls, GroupLag.LogEnds logEnds) {
        this.calls = calls;
        this.logEnds = logEnds;
    }

    /**
     * Every group of the cluster: ListGroups (apiKey 21) at each live broker (each answers for the
     * groups it coordinates), merged and sorted by group id.
     *
     * @throws StellflowException the first broker's refusal, naming the broker
     */
    public List<ListGroupsResponse.ListedGroup> listGroups() {
        Map<String, ListGroupsResponse.ListedGroup> all = new TreeMap<>();
        for (HostPort broker : calls.brokers()) {
            ListGroupsResponse r = calls.callBroker(
                    broker,
                    "ListGroups",
                    ApiKeys.LIST_GROUPS,
                    new ListGroupsRequest(List.of())::write,
                    ListGroupsResponse::read);
            if (r.errorCode() != Errors.NONE) {
                throw new StellflowException(r.errorCode(), "ListGroups at " + broker + " refused");
            }
            for (ListGroupsResponse.ListedGroup g : r.groups()) {
                all.putIfAbsent(g.groupId(), g);
            }
        }
        return List.copyOf(all.values());
    }

    /**
     * DescribeGroups (apiKey 22) of one group at its coordinator. An unknown group is returned, not
     * thrown: errorCode 45 GROUP_ID_NOT_FOUND, state Dead, no members.
     */
    public DescribeGroupsResponse.DescribedGroup describeGroup(String groupId) {
        DescribeGroupsResponse r = calls.call(
                groupId,
                "DescribeGroups " + groupId,
                ApiKeys.DESCRIBE_GROUPS,
                (short) 0,
                v -> new DescribeGroupsRequest(List.of(groupId))::write,
                v -> DescribeGroupsResponse::read,
                resp -> resp.groups().isEmpty()
                        ? Errors.NONE
                        : resp.groups().get(0).errorCode());
        if (r.groups().size() != 1 || !groupId.equals(r.groups().get(0).groupId())) {
            throw new StellflowException(
                    Errors.UNKNOWN_SERVER_ERROR,
                    "DescribeGroups " + groupId + ": the coordinator answered for "
                            + r.groups().size() + " group(s)");
        }
        DescribeGroupsResponse.DescribedGroup g = r.groups().get(0);
        if (g.errorCode() != Errors.NONE && g.errorCode() != Errors.GROUP_ID_NOT_FOUND) {
            throw new StellflowException(g.errorCode(), "DescribeGroups " + groupId + " refused");
        }
        return g;
    }

    /**
     * Every committed offset of {@code groupId} (OffsetFetch v1 with null topics), sorted by {@link
     * #PARTITION_ORDER}; empty for a group without offsets or an unknown group.
     *
     * @throws StellflowException 2 UNSUPPORTED_VERSION when the coordinator offers only OffsetFetch v0
     *     (it cannot list every partition), or a partition's error
     */
    public Map<TopicPartition, Long> committedOffsets(String groupId) {
        OffsetFetchRequest req = new OffsetFetchRequest(groupId, null);
        OffsetFetchResponse r = calls.call(
                groupId,
                "OffsetFetch " + groupId,
                ApiKeys.OFFSET_FETCH,
                OffsetFetchRequest.VERSION_WITH_ALL_TOPICS,
                v -> {
                    if (v < OffsetFetchRequest.VERSION_WITH_ALL_TOPICS) {
                        throw new StellflowException(
                                Errors.UNSUPPORTED_VERSION,
                                "the coordinator offers OffsetFetch v0 only, which cannot list a group's offsets");
                    }
                    return out -> req.write(out, (short) v);
                },
                v -> b -> OffsetFetchResponse.read(b, (short) v),
                OffsetFetchResponse::errorCode);
        if (r.errorCode() == Errors.GROUP_ID_NOT_FOUND) {
            return Map.of();
        }
        if (r.errorCode() != Errors.NONE) {
            throw new StellflowException(r.errorCode(), "OffsetFetch " + groupId + " refused");
        }
        Map<TopicPartition, Long> out = new TreeMap<>(PARTITION_ORDER);
        for (OffsetFetchResponse.OffsetFetchTopicResponse t : r.topics()) {
            for (OffsetFetchResponse.OffsetFetchPartitionResponse p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                if (p.errorCode() != Errors.NONE) {
                    throw new StellflowException(p.errorCode(), "OffsetFetch " + groupId + " " + tp + " refused");
                }
                if (p.offset() != OffsetFetchResponse.NO_OFFSET) {
                    out.put(tp, p.offset());
                }
            }
        }
        return out;
    }

    /**
     * The lag of {@code groupId}: DescribeGroups and OffsetFetch at its coordinator, then per topic a
     * Metadata lookup and per partition a ListOffsets "latest" (the high watermark) at the leader;
     * see {@link GroupLag} for the rows and what is unknown. A deleted topic or a partition beyond the
     * topic's count gets an unknown log end at once, without waiting for retries. An unknown group is
     * returned, not thrown (errorCode 45 in {@link GroupLag#group()}, rows only for offsets it still
     * has). Blocking: one round trip per call, topic and partition, each bounded as the other calls.
     *
     * @throws StellflowException what {@link #describeGroup} and {@link #committedOffsets} throw, or
     *     NETWORK_ERROR when a leader could not be reached
     */
    public GroupLag describeLag(String groupId) {
        DescribeGroupsResponse.DescribedGroup g = describeGroup(groupId);
        return GroupLag.of(g, committedOffsets(groupId), logEnds);
    }

    /**
     * Commits {@code offsets} for {@code groupId} from outside the group (OffsetCommit v1, memberId
     * null, memberEpoch -1; the coordinator journals it as a reset and refuses it with 42
     * UNKNOWN_MEMBER_ID while the group has members of our protocol).
     *
     * @return each partition's error code (0 = committed), in {@link #PARTITION_ORDER}
     */
    public Map<TopicPartition, Short> commitOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        Map<String, List<OffsetCommitRequest.OffsetCommitPartition>> byTopic = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, Long> e : sorted(offsets).entrySet()) {
            byTopic.computeIfAbsent(e.getKey().topic(), k -> new ArrayList<>())
                    .add(new OffsetCommitRequest.OffsetCommitPartition(
                            e.getKey().partition(), e.getValue(), null));
        }
        List<OffsetCommitRequest.OffsetCommitTopic> topics = new ArrayList<>();
        byTopic.forEach((t, ps) -> topics.add(new OffsetCommitRequest.OffsetCommitTopic(t, ps)));
        OffsetCommitRequest req = new OffsetCommitRequest(groupId, null, OffsetCommitRequest.NO_MEMBER_EPOCH, topics);
        OffsetCommitResponse r = calls.call(
                groupId,
                "OffsetCommit " + groupId,
                ApiKeys.OFFSET_COMMIT,
                OffsetCommitRequest.VERSION_WITH_MEMBER_EPOCH,
                v -> out -> req.write(out, (short) v),
                v -> OffsetCommitResponse::read,
                AdminGroups::firstCode);
        Map<TopicPartition, Short> out = new TreeMap<>(PARTITION_ORDER);
        for (OffsetCommitResponse.OffsetCommitTopicResponse t : r.topics()) {
            for (OffsetCommitResponse.OffsetCommitPartitionResponse p : t.partitions()) {
                out.put(new TopicPartition(t.topic(), p.partition()), p.errorCode());
            }
        }
        return out;
    }

    /**
     * Deletes {@code groupId} and its offsets (DeleteGroups, apiKey 23).
     *
     * @throws StellflowException 46 NON_EMPTY_GROUP while it has members, 45 GROUP_ID_NOT_FOUND
     */
    public void deleteGroup(String groupId) {
        DeleteGroupsResponse r = calls.call(
                groupId,
                "DeleteGroups " + groupId,
                ApiKeys.DELETE_GROUPS,
                (short) 0,
                v -> new DeleteGroupsRequest(List.of(groupId))::write,
                v -> DeleteGroupsResponse::read,
                resp -> resp.results().isEmpty()
                        ? Errors.NONE
                        : resp.results().get(0).errorCode());
        if (r.results().size() != 1) {
            throw new StellflowException(
                    Errors.UNKNOWN_SERVER_ERROR,
                    "DeleteGroups " + groupId + ": the coordinator answered for "
                            + r.results().size() + " group(s)");
        }
        short code = r.results().get(0).errorCode();
        if (code != Errors.NONE) {
            throw new StellflowException(code, "DeleteGroups " + groupId + " refused");
        }
    }

    /**
     * Deletes {@code groupId}'s committed offsets of {@code partitions} (OffsetDelete, apiKey 24).
     *
     * @return each partition's error code (0 = deleted, 48 GROUP_SUBSCRIBED_TO_TOPIC while a member is
     *     assigned it), in {@link #PARTITION_ORDER}
     * @throws StellflowException the group-level refusal (45 GROUP_ID_NOT_FOUND, ...)
     */
    public Map<TopicPartition, Short> deleteOffsets(String groupId, Collection<TopicPartition> partitions) {
        Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
        List<TopicPartition> order = new ArrayList<>(partitions);
        order.sort(PARTITION_ORDER);
        for (TopicPartition tp : order) {
            byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
        }
        List<TopicPartitions> topics = new ArrayList<>();
        byTopic.forEach((t, ps) -> topics.add(new TopicPartitions(t, ps)));
        OffsetDeleteResponse r = calls.call(
                groupId,
                "OffsetDelete " + groupId,
                ApiKeys.OFFSET_DELETE,
                (short) 0,
                v -> new OffsetDeleteRequest(groupId, topics)::write,
                v -> OffsetDeleteResponse::read,
                OffsetDeleteResponse::errorCode);
        if (r.errorCode() != Errors.NONE) {
            throw new StellflowException(r.errorCode(), "OffsetDelete " + groupId + " refused");
        }
        Map<TopicPartition, Short> out = new TreeMap<>(PARTITION_ORDER);
        for (OffsetDeleteResponse.OffsetDeleteTopicResponse t : r.topics()) {
            for (OffsetDeleteResponse.OffsetDeletePartitionResponse p : t.partitions()) {
                out.put(new TopicPartition(t.topic(), p.partition()), p.errorCode());
            }
        }
        return out;
    }

    /**
     * The newest {@code maxEntries} entries of {@code groupId}'s offset journal (OffsetHistory, apiKey
     * 25), in the coordinator's order (oldest first).
     *
     * @throws StellflowException the refusal (45 GROUP_ID_NOT_FOUND, 3 INVALID_REQUEST for maxEntries
     *     below 1, ...)
     */
    public List<OffsetHistoryResponse.OffsetHistoryEntry> offsetHistory(String groupId, int maxEntries) {
        OffsetHistoryResponse r = calls.call(
                groupId,
                "OffsetHistory " + groupId,
                ApiKeys.OFFSET_HISTORY,
                (short) 0,
                v -> new OffsetHistoryRequest(groupId, maxEntries)::write,
                v -> OffsetHistoryResponse::read,
                OffsetHistoryResponse::errorCode);
        if (r.errorCode() != Errors.NONE) {
            throw new StellflowException(r.errorCode(), "OffsetHistory " + groupId + " refused");
        }
        return r.entries();
    }

    private static Map<TopicPartition, Long> sorted(Map<TopicPartition, Long> offsets) {
        Map<TopicPartition, Long> out = new TreeMap<>(PARTITION_ORDER);
        out.putAll(offsets);
        return out;
    }

    /** OffsetCommit has no group-level code: a coordinator error shows on every partition. */
    private static short firstCode(OffsetCommitResponse r) {
        for (OffsetCommitResponse.OffsetCommitTopicResponse t : r.topics()) {
            for (OffsetCommitResponse.OffsetCommitPartitionResponse p : t.partitions()) {
                return p.errorCode();
            }
        }
        return Errors.NONE;
    }
}
