package io.stellflow.tools;

import io.stellflow.client.GroupLag;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * What {@link ConsumerGroupsCommand} needs of a cluster: the group calls of the admin client and the
 * offset lookups of the reset targets. {@link ClientGroupAdmin} is the real one; tests give a fake.
 *
 * <p>Errors: a refusal or an unreachable broker throws {@link StellflowException} with the code;
 * per-partition outcomes are returned. Thread-safety: one command's thread.
 */
interface GroupAdmin extends AutoCloseable {
    /** Every group of the cluster, sorted by id. */
    List<ListGroupsResponse.ListedGroup> listGroups();

    /** One group; an unknown group has errorCode 45 GROUP_ID_NOT_FOUND and state Dead. */
    DescribeGroupsResponse.DescribedGroup describeGroup(String groupId);

    /** Every committed offset of the group (empty for an unknown group), by topic then partition. */
    Map<TopicPartition, Long> committedOffsets(String groupId);

    /**
     * The group's lag per partition ({@link io.stellflow.client.AdminGroups#describeLag}); an unknown
     * group has errorCode 45 in {@link GroupLag#group()}.
     */
    GroupLag describeLag(String groupId);

    /** The partition count of {@code topic}, or -1 when it does not exist. */
    int partitionCount(String topic);

    /** The log start offset of {@code tp}. */
    long earliestOffset(TopicPartition tp);

    /** The log end offset of {@code tp} (the high watermark: what a consumer can read up to). */
    long latestOffset(TopicPartition tp);

    /** The first offset whose record's timestamp is at or after {@code timestampMs}, or -1 when none is. */
    long offsetForTime(TopicPartition tp, long timestampMs);

    /** Commits {@code offsets} from outside the group; each partition's error code (0 = done). */
    Map<TopicPartition, Short> commitOffsets(String groupId, Map<TopicPartition, Long> offsets);

    /** Deletes the group; throws NON_EMPTY_GROUP (46) or GROUP_ID_NOT_FOUND (45). */
    void deleteGroup(String groupId);

    /** Deletes the group's offsets of {@code partitions}; each partition's error code (0 = done). */
    Map<TopicPartition, Short> deleteOffsets(String groupId, Collection<TopicPartition> partitions);

    /** The newest {@code maxEntries} journal entries of the group's offset changes, oldest first. */
    List<OffsetHistoryResponse.OffsetHistoryEntry> offsetHistory(String groupId, int maxEntries);

    @Override
    void close();
}
