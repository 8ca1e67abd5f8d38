package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.HeartbeatRequest;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.OffsetDeleteResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.SyncGroupRequest;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The shard's commands over the codecs: offsets, fencing, lifecycle, journal, admin. */
class GroupShardTest {
    private static final long DAY_MS = 24L * 60 * 60 * 1000;
    private ShardFixture f;

    @BeforeEach
    void setUp() {
        f = new ShardFixture();
        f.topics.put("t", 4);
    }

    @Test
    void v0CommitsAreAcceptedFromAnyoneAndUnknownGroupsFetchMinusOneWithoutError() {
        OffsetFetchResponse none = f.shard.fetchOffsets(
                new OffsetFetchRequest("nobody", List.of(new OffsetFetchRequest.OffsetFetchTopic("t", List.of(0)))),
                (short) 0);
        assertThat(none.topics().get(0).partitions().get(0))
                .isEqualTo(new OffsetFetchResponse.OffsetFetchPartitionResponse(0, -1, "", Errors.NONE));
        assertThat(f.commitV0("g", "t", 1, 42)).isEqualTo(Errors.NONE);
        assertThat(f.fetch("g", "t", 1)).isEqualTo(42);
        assertThat(f.commitV0("g", "t", 1, -1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(f.commitV0("g", "t", 4, 1)).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(f.commitV0("g", "nope", 0, 1)).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(f.commitV0("", "t", 0, 1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(f.fetch("g", "t", 1)).isEqualTo(42);
        // v1 with null topics: everything the group has.
        f.commitV0("g", "t", 3, 7);
        OffsetFetchResponse all = f.shard.fetchOffsets(new OffsetFetchRequest("g", null), (short) 1);
        assertThat(all.topics()).hasSize(1);
        assertThat(all.topics().get(0).partitions())
                .extracting(p -> p.partition() + ":" + p.offset())
                .containsExactly("1:42", "3:7");
    }

    @Test
    void offsetFetchAnswersWhileAMemberJoinsAndPartitionsAreBeingRevoked() {
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t"), null);
        String am = a.memberId();
        assertThat(f.commit((short) 1, "g", am, 1, "t", 0, 10)).isEqualTo(Errors.NONE);
        assertThat(f.commit((short) 1, "g", am, 1, "t", 3, 30)).isEqualTo(Errors.NONE);
        // b joins: the group is reconciling (a must revoke, b waits), and fetches still answer.
        f.heartbeat("g", null, 0, null, List.of("t"), null);
        f.heartbeat("g", am, 1, null, null, null);
        for (short version = 0; version <= 1; version++) {
            OffsetFetchResponse r = f.shard.fetchOffsets(
                    new OffsetFetchRequest(
                            "g", List.of(new OffsetFetchRequest.OffsetFetchTopic("t", List.of(0, 1, 3)))),
                    version);
            assertThat(r.topics().get(0).partitions())
                    .extracting(p -> p.partition() + ":" + p.offset() + ":" + p.errorCode())
                    .containsExactly("0:10:0", "1:-1:0", "3:30:0");
        }
    }

    @Test
    void v1CommitsAreFencedPerPartitionByMemberEpoch() {
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t"), null);
        assertThat(a.assignment()).containsExactly(new TopicPartitions("t", List.of(0, 1, 2, 3)));
        String am = a.memberId();
        assertThat(f.commit((short) 1, "g", am, 1, "t", 0, 10)).isEqualTo(Errors.NONE);
        ConsumerGroupHeartbeatResponse b = f.heartbeat("g", null, 0, null, List.of("t"), null);
        // a is asked to revoke two partitions; until it does, it may still commit them.
        ConsumerGroupHeartbeatResponse a2 = f.heartbeat("g", am, 1, null, null, null);
        List<Integer> aKeeps = a2.assignment().get(0).partitions();
        int revoked = aKeeps.contains(3) ? 0 : 3;
        assertThat(f.commit((short) 1, "g", am, 1, "t", revoked, 11)).isEqualTo(Errors.NONE);
        f.heartbeat("g", am, 1, null, null, List.of(new TopicPartitions("t", aKeeps)));
        // a moved to epoch 2 without the revoked partition: an old-epoch commit is stale, and a
        // current-epoch commit of the partition it gave up is refused too.
        assertThat(f.commit((short) 1, "g", am, 1, "t", revoked, 12)).isEqualTo(Errors.STALE_MEMBER_EPOCH);
        assertThat(f.commit((short) 1, "g", am, 2, "t", revoked, 12)).isEqualTo(Errors.STALE_MEMBER_EPOCH);
        assertThat(f.commit((short) 1, "g", am, 9, "t", revoked, 12)).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
        assertThat(f.commit((short) 1, "g", "ghost", 2, "t", revoked, 12)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        // From outside (tools): refused while the group has members of our protocol.
        assertThat(f.commit((short) 1, "g", null, -1, "t", revoked, 12)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        f.heartbeat("g", b.memberId(), 2, null, null, List.of());
        assertThat(f.commit((short) 1, "g", b.memberId(), 2, "t", revoked, 13)).isEqualTo(Errors.NONE);
        assertThat(f.fetch("g", "t", revoked)).isEqualTo(13);
        // Once everyone left, a tool's commit (a reset) is accepted and journaled.
        f.heartbeat("g", am, -1, null, null, null);
        f.heartbeat("g", b.memberId(), -1, null, null, null);
        assertThat(f.commit((short) 1, "g", null, -1, "t", revoked, 5)).isEqualTo(Errors.NONE);
        OffsetHistoryResponse h = f.shard.offsetHistory("g", 10);
        assertThat(h.entries()).hasSize(1);
        assertThat(h.entries().get(0).source()).isEqualTo("reset");
        assertThat(h.entries().get(0).oldOffset()).isEqualTo(13);
        assertThat(h.entries().get(0).newOffset()).isEqualTo(5);
        assertThat(h.entries().get(0).principal()).isEqualTo("ANONYMOUS");
        assertThat(h.entries().get(0).clientId()).isEqualTo("app");
    }

    @Test
    void theClassicProtocolOverTheCodecs() {
        JoinGroupResponse j =
                f.run(f.shard.joinGroup(new JoinGroupRequest("v0", "", 30_000), ShardFixture.ORIGIN, f.nowMs));
        assertThat(j.errorCode()).isEqualTo(Errors.NONE);
        assertThat(j.generationId()).isEqualTo(1);
        assertThat(j.memberId()).isEqualTo("app-id1");
        assertThat(j.leaderId()).isEqualTo("app-id1");
        JoinGroupResponse given = f.run(f.shard.joinGroup(
                new JoinGroupRequest("v0", "stellflow-go-consumer", 30_000), ShardFixture.ORIGIN, f.nowMs));
        assertThat(given.memberId()).isEqualTo("stellflow-go-consumer");
        assertThat(given.generationId()).isEqualTo(2);
        assertThat(f.run(f.shard.syncGroup(new SyncGroupRequest("v0", 2, "app-id1"), f.nowMs))
                        .errorCode())
                .isEqualTo(Errors.NONE);
        assertThat(f.run(f.shard.heartbeat(new HeartbeatRequest("v0", 1, "app-id1"), f.nowMs))
                        .errorCode())
                .isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(f.run(f.shard.heartbeat(new HeartbeatRequest("none", 1, "x"), f.nowMs))
                        .errorCode())
                .isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(f.run(f.shard.joinGroup(new JoinGroupRequest("v0", "", 10), ShardFixture.ORIGIN, f.nowMs))
                        .errorCode())
                .isEqualTo(Errors.INVALID_REQUEST);
        assertThat(f.run(f.shard.joinGroup(new JoinGroupRequest("", "", 30_000), ShardFixture.ORIGIN, f.nowMs)))
                .isEqualTo(new JoinGroupResponse(Errors.INVALID_REQUEST, -1, null, null));
        // The id is taken by a live classic group: our protocol is refused, with a reason.
        ConsumerGroupHeartbeatResponse r = f.heartbeat("v0", null, 0, null, List.of("t"), null);
        assertThat(r.errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(r.errorMessage()).contains("classic");
        // Sessions expire through poll, one generation per eviction.
        assertThat(f.shard.nextDeadlineMs()).isEqualTo(f.nowMs + 30_000);
        f.run(f.shard.poll(f.nowMs + 30_000));
        DescribedGroup d = f.shard.describeGroup("v0");
        assertThat(d.state()).isEqualTo("Empty");
        assertThat(d.groupEpoch()).isEqualTo(4);
        assertThat(d.protocolType()).isEqualTo("classic");
    }

    @Test
    void offsetsOfAnEmptyGroupExpireSevenDaysAfterItBecameEmpty() {
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t"), null);
        f.commit((short) 1, "g", a.memberId(), 1, "t", 0, 10);
        f.commitV0("loose", "t", 0, 3); // no group: counts from the commit
        // Ten days with a live member: nothing expires.
        for (int day = 0; day < 10; day++) {
            f.nowMs += DAY_MS;
            f.heartbeat("g", a.memberId(), 1, null, null, null);
            f.run(f.shard.poll(f.nowMs));
        }
        assertThat(f.fetch("g", "t", 0)).isEqualTo(10);
        assertThat(f.fetch("loose", "t", 0)).isEqualTo(-1);
        assertThat(f.shard.groupCount()).isEqualTo(1);
        f.heartbeat("g", a.memberId(), -1, null, null, null);
        long emptySince = f.nowMs;
        f.nowMs = emptySince + 7 * DAY_MS - 1;
        f.run(f.shard.poll(f.nowMs));
        assertThat(f.fetch("g", "t", 0)).isEqualTo(10);
        f.nowMs = emptySince + 7 * DAY_MS + f.config.offsetsRetentionCheckIntervalMs();
        f.run(f.shard.poll(f.nowMs));
        assertThat(f.fetch("g", "t", 0)).isEqualTo(-1);
        assertThat(f.shard.groupCount()).isZero();
        assertThat(f.shard.describeGroup("g").errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(ShardFixture.asMap(f.log)).isEmpty(); // compaction leaves nothing of it
    }

    @Test
    void anEmptyGroupWithoutOffsetsIsDeletedAtTheNextRetentionCheck() {
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t"), null);
        f.run(f.shard.joinGroup(new JoinGroupRequest("v0", "m", 30_000), ShardFixture.ORIGIN, f.nowMs));
        f.heartbeat("g", a.memberId(), -1, null, null, null);
        assertThat(f.shard.groupCount()).isEqualTo(2);
        long check = f.nowMs + f.config.offsetsRetentionCheckIntervalMs();
        assertThat(f.shard.nextDeadlineMs()).isLessThanOrEqualTo(check);
        f.run(f.shard.poll(check));
        // "g" is gone, and so is "v0": its member's 30 s session ended first in the same poll.
        assertThat(f.shard.describeGroup("g").errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(f.shard.groupCount()).isZero();
        assertThat(ShardFixture.asMap(f.log)).isEmpty();
    }

    @Test
    void deletingGroupsOffsetsAndTopicsLeavesTombstonesAndAJournal() {
        f.commitV0("g", "t", 0, 10);
        f.commitV0("g", "t", 1, 20);
        f.topics.put("u", 1);
        f.commitV0("g", "u", 0, 5);
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t"), null);
        assertThat(f.run(f.shard.deleteGroup("g", ShardFixture.ORIGIN, f.nowMs)))
                .isEqualTo(Errors.NON_EMPTY_GROUP);
        assertThat(f.run(f.shard.deleteGroup("nope", ShardFixture.ORIGIN, f.nowMs)))
                .isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        OffsetDeleteResponse del = f.run(f.shard.deleteOffsets(
                new OffsetDeleteRequest(
                        "g", List.of(new TopicPartitions("t", List.of(0)), new TopicPartitions("u", List.of(0, 9)))),
                ShardFixture.ORIGIN,
                f.nowMs));
        assertThat(del.topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.GROUP_SUBSCRIBED_TO_TOPIC);
        assertThat(del.topics().get(1).partitions())
                .extracting(OffsetDeleteResponse.OffsetDeletePartitionResponse::errorCode)
                .containsExactly(Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(f.fetch("g", "u", 0)).isEqualTo(-1);
        f.nowMs += 1;
        f.run(f.shard.deleteTopicOffsets(Set.of("t"), f.nowMs));
        assertThat(f.fetch("g", "t", 1)).isEqualTo(-1);
        List<OffsetHistoryResponse.OffsetHistoryEntry> h =
                f.shard.offsetHistory("g", 10).entries();
        assertThat(h)
                .extracting(e ->
                        e.source() + " " + e.topic() + "-" + e.partition() + " " + e.oldOffset() + "->" + e.newOffset())
                .containsExactly("topic-deleted t-1 20->-1", "topic-deleted t-0 10->-1", "delete u-0 5->-1");
        assertThat(f.shard.offsetHistory("g", 1).entries()).hasSize(1);
        assertThat(f.shard.offsetHistory("nope", 1).errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        f.heartbeat("g", a.memberId(), -1, null, null, null);
        assertThat(f.run(f.shard.deleteGroup("g", ShardFixture.ORIGIN, f.nowMs)))
                .isEqualTo(Errors.NONE);
        assertThat(f.shard.groupCount()).isZero();
        assertThat(ShardFixture.asMap(f.log)).isEmpty();
    }

    @Test
    void theJournalIsARingSoCompactionBoundsIt() {
        GroupConfig d = GroupConfig.defaults();
        f = new ShardFixture(new GroupConfig(
                d.classicMinSessionTimeoutMs(),
                d.classicMaxSessionTimeoutMs(),
                d.consumerSessionTimeoutMs(),
                d.consumerHeartbeatIntervalMs(),
                d.defaultRebalanceTimeoutMs(),
                d.defaultAssignor(),
                d.offsetsRetentionMs(),
                d.offsetsRetentionCheckIntervalMs(),
                d.maxGroupSize(),
                d.offsetMetadataMaxBytes(),
                4,
                true));
        f.topics.put("t", 1);
        for (int i = 1; i <= 10; i++) {
            f.nowMs++;
            f.commitV0("g", "t", 0, i);
        }
        f.commitV0("g", "t", 0, 10); // no change: not journaled
        List<OffsetHistoryResponse.OffsetHistoryEntry> h =
                f.shard.offsetHistory("g", 100).entries();
        assertThat(h)
                .extracting(OffsetHistoryResponse.OffsetHistoryEntry::newOffset)
                .containsExactly(10L, 9L, 8L, 7L);
        long journalKeys = ShardFixture.asMap(f.log).keySet().stream()
                .filter(k -> k.startsWith("0006"))
                .count();
        assertThat(journalKeys).isEqualTo(4);
        // A fresh shard loading the log continues the ring where it stopped.
        GroupShard loaded = f.replayed(f.nowMs);
        assertThat(loaded.offsetHistory("g", 100)).isEqualTo(f.shard.offsetHistory("g", 100));
    }

    @Test
    void afterAFailoverTheNewLeaderKeepsAssignmentsAndSessionsRestart() {
        f.topics.put("u", 2);
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t", "u"), null);
        ConsumerGroupHeartbeatResponse b = f.heartbeat("g", null, 0, "inst-b", List.of("t"), null);
        f.heartbeat("g", a.memberId(), 1, null, null, null);
        f.commitV0("g", "t", 0, 9);
        long loadAt = f.nowMs + 40_000; // later than the old leader's deadlines would have been
        GroupShard fresh = f.replayed(loadAt);
        assertThat(ShardFixture.asMap(fresh.stateRecords())).isEqualTo(ShardFixture.asMap(f.shard.stateRecords()));
        // Same metadata: the recomputation after the load writes nothing and moves no epoch.
        assertThat(fresh.poll(loadAt).records()).isEmpty();
        assertThat(fresh.describeGroup("g")).isEqualTo(f.shard.describeGroup("g"));
        // Sessions restarted at the load: nobody expires until loadAt + session timeout.
        assertThat(fresh.poll(loadAt + f.config.consumerSessionTimeoutMs() - 1).records())
                .isEmpty();
        assertThat(fresh.describeGroup("g").members()).hasSize(2);
        fresh.poll(loadAt + f.config.consumerSessionTimeoutMs());
        assertThat(fresh.describeGroup("g").members()).isEmpty();
        assertThat(fresh.fetchOffsets(new OffsetFetchRequest("g", null), (short) 1)
                        .topics())
                .hasSize(1);
        assertThat(b.memberId()).isNotEqualTo(a.memberId());
    }

    @Test
    void metadataThatChangedWhileNobodyLedGivesANewTargetAfterTheLoad() {
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t"), null);
        int epoch = f.shard.describeGroup("g").groupEpoch();
        f.topics.put("t", 6); // grew during the failover
        GroupShard fresh = f.replayed(f.nowMs);
        assertThat(fresh.poll(f.nowMs).records()).isNotEmpty();
        DescribedGroup d = fresh.describeGroup("g");
        assertThat(d.groupEpoch()).isEqualTo(epoch + 1);
        assertThat(d.assignmentEpoch()).isEqualTo(epoch + 1);
        ConsumerGroupHeartbeatResponse r = fresh.consumerGroupHeartbeat(
                        new ConsumerGroupHeartbeatRequest("g", a.memberId(), epoch, null, null, -1, null, null, null),
                        ShardFixture.ORIGIN,
                        f.nowMs)
                .response();
        assertThat(r.memberEpoch()).isEqualTo(epoch + 1);
        assertThat(r.assignment()).containsExactly(new TopicPartitions("t", List.of(0, 1, 2, 3, 4, 5)));
    }

    @Test
    void aRecordOfAnUnknownTypeIsRefusedAndChangesNothing() {
        f.commitV0("g", "t", 0, 9);
        byte[] key = f.log.get(0).key().clone();
        key[1] = 42;
        Map<String, String> before = ShardFixture.asMap(f.shard.stateRecords());
        assertThatThrownBy(() -> f.shard.replay(7, key, f.log.get(0).value()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("record type 42");
        assertThat(ShardFixture.asMap(f.shard.stateRecords())).isEqualTo(before);
        assertThat(f.fetch("g", "t", 0)).isEqualTo(9);
    }

    @Test
    void listAndDescribe() {
        f.commitV0("loose", "t", 0, 1);
        f.run(f.shard.joinGroup(new JoinGroupRequest("classic", "m", 30_000), ShardFixture.ORIGIN, f.nowMs));
        ConsumerGroupHeartbeatResponse a = f.heartbeat("ours", null, 0, "i1", List.of("t"), null);
        assertThat(f.shard.listGroups(List.of()))
                .extracting(g -> g.groupId() + "/" + g.protocolType() + "/" + g.state())
                .containsExactly("classic/classic/Stable", "loose/classic/Empty", "ours/consumer/Stable");
        assertThat(f.shard.listGroups(List.of("empty")))
                .extracting(g -> g.groupId())
                .containsExactly("loose");
        DescribedGroup d = f.shard.describeGroup("ours");
        assertThat(d.groupEpoch()).isEqualTo(1);
        assertThat(d.assignmentEpoch()).isEqualTo(1);
        assertThat(d.assignor()).isEqualTo("uniform");
        assertThat(d.members()).hasSize(1);
        assertThat(d.members().get(0).memberId()).isEqualTo(a.memberId());
        assertThat(d.members().get(0).instanceId()).isEqualTo("i1");
        assertThat(d.members().get(0).clientHost()).isEqualTo("/10.0.0.7");
        assertThat(d.members().get(0).assignment()).containsExactly(new TopicPartitions("t", List.of(0, 1, 2, 3)));
        assertThat(f.shard.groupCount()).isEqualTo(3);
    }
}
