package io.stellflow.tools;

import io.stellflow.client.AdminGroups;
import io.stellflow.client.GroupLag;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/** {@link GroupAdmin} over the admin client ({@link StellflowAdmin}, {@link AdminGroups}). One thread. */
final class ClientGroupAdmin implements GroupAdmin {
    private final StellflowAdmin admin;
    private final AdminGroups groups;

    ClientGroupAdmin(Properties props) {
        this.admin = new StellflowAdmin(props);
        this.groups = admin.groups();
    }

    @Override
    public List<ListGroupsResponse.ListedGroup> listGroups() {
        return groups.listGroups();
    }

    @Override
    public DescribeGroupsResponse.DescribedGroup describeGroup(String groupId) {
        return groups.describeGroup(groupId);
    }

    @Override
    public Map<TopicPartition, Long> committedOffsets(String groupId) {
        return groups.committedOffsets(groupId);
    }

    @Override
    public int partitionCount(String topic) {
        return admin.partitionCount(topic);
    }

    @Override
    public GroupLag describeLag(String groupId) {
        return groups.describeLag(groupId);
    }

    @Override
    public long earliestOffset(TopicPartition tp) {
        return admin.listOffsets(tp, StellflowAdmin.EARLIEST);
    }

    @Override
    public long latestOffset(TopicPartition tp) {
        return admin.listOffsets(tp, StellflowAdmin.LATEST);
    }

    @Override
    public long offsetForTime(TopicPartition tp, long timestampMs) {
        try {
            return admin.listOffsets(tp, timestampMs);
        } catch (StellflowException e) {
            if (e.errorCode() == Errors.OFFSET_OUT_OF_RANGE) {
                return -1; // no record at or after the time (docs/spec/wire-protocol.md §6.5, ListOffsets)
            }
            throw e;
        }
    }

    @Override
    public Map<TopicPartition, Short> commitOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        return groups.commitOffsets(groupId, offsets);
    }

    @Override
    public void deleteGroup(String groupId) {
        groups.deleteGroup(groupId);
    }

    @Override
    public Map<TopicPartition, Short> deleteOffsets(String groupId, Collection<TopicPartition> partitions) {
        return groups.deleteOffsets(groupId, partitions);
    }

    @Override
    public List<OffsetHistoryResponse.OffsetHistoryEntry> offsetHistory(String groupId, int maxEntries) {
        return groups.offsetHistory(groupId, maxEntries);
    }

    @Override
    public void close() {
        admin.close();
    }
}
