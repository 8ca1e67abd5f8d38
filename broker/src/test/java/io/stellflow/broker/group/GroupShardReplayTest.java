package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.HeartbeatRequest;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.SyncGroupRequest;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The load-on-failover guarantee: after any command sequence, a fresh shard that replays the
 * records those commands produced holds the same state, and that state is exactly what compaction
 * of the records keeps (last value per key, tombstones removed). Seeded random sequences of every
 * command, with the clock and topic metadata moving; checked every 25 steps.
 */
class GroupShardReplayTest {
    private static final List<String> GROUPS = List.of("a", "b", "c");
    private static final List<String> TOPICS = List.of("t1", "t2", "t3");

    @ParameterizedTest
    @ValueSource(longs = {1, 42, 20261204})
    void replayingTheRecordsRebuildsTheSameState(long seed) {
        Random rnd = new Random(seed);
        ShardFixture f = new ShardFixture();
        TOPICS.forEach(t -> f.topics.put(t, 1 + rnd.nextInt(6)));
        for (int step = 1; step <= 600; step++) {
            runOne(f, rnd);
            checkNoPartitionOwnedTwice(f);
            if (step % 25 == 0) {
                Map<String, String> live = ShardFixture.asMap(f.shard.stateRecords());
                assertThat(ShardFixture.asMap(f.log))
                        .as("seed %d step %d: compacted log", seed, step)
                        .isEqualTo(live);
                GroupShard fresh = f.replayed(f.nowMs);
                assertThat(ShardFixture.asMap(fresh.stateRecords()))
                        .as("seed %d step %d: replayed", seed, step)
                        .isEqualTo(live);
                assertThat(fresh.groupCount()).isEqualTo(f.shard.groupCount());
                for (String g : GROUPS) {
                    assertThat(fresh.describeGroup(g)).isEqualTo(f.shard.describeGroup(g));
                    assertThat(fresh.offsetHistory(g, 1000)).isEqualTo(f.shard.offsetHistory(g, 1000));
                }
            }
        }
        // The sequence reached every kind of state, including tombstones.
        int[] types = new int[7];
        int tombstones = 0;
        for (var r : f.log) {
            types[r.key()[1]]++;
            tombstones += r.isTombstone() ? 1 : 0;
        }
        assertThat(types).doesNotContain(0);
        assertThat(tombstones).isPositive();
    }

    private static void runOne(ShardFixture f, Random rnd) {
        String group = GROUPS.get(rnd.nextInt(GROUPS.size()));
        DescribedGroup d = f.shard.describeGroup(group);
        List<DescribedMember> members = d.members();
        DescribedMember m = members.isEmpty() ? null : members.get(rnd.nextInt(members.size()));
        String topic = TOPICS.get(rnd.nextInt(TOPICS.size()));
        switch (rnd.nextInt(16)) {
            case 0, 1 -> {
                List<String> subs = new ArrayList<>(TOPICS.subList(0, 1 + rnd.nextInt(TOPICS.size())));
                String instance = rnd.nextInt(3) == 0 ? "i" + rnd.nextInt(3) : null;
                f.heartbeat(group, null, 0, instance, subs, null);
            }
            case 2, 3, 4 -> {
                if (m != null && d.protocolType().equals("consumer")) {
                    // Usually acknowledges (owned = what it has), sometimes says nothing.
                    List<TopicPartitions> owned = rnd.nextBoolean() ? m.assignment() : null;
                    List<String> subs = rnd.nextInt(8) == 0 ? List.of(topic) : null;
                    f.heartbeat(group, m.memberId(), m.memberEpoch(), m.instanceId(), subs, owned);
                }
            }
            case 5 -> {
                if (m != null && d.protocolType().equals("consumer")) {
                    boolean staticLeave = m.instanceId() != null && rnd.nextBoolean();
                    f.heartbeat(group, m.memberId(), staticLeave ? -2 : -1, m.instanceId(), null, null);
                }
            }
            case 6 ->
                f.run(f.shard.joinGroup(
                        new JoinGroupRequest(group, rnd.nextBoolean() ? "" : "given", 10_000),
                        ShardFixture.ORIGIN,
                        f.nowMs));
            case 7 -> {
                if (m != null && d.protocolType().equals("classic")) {
                    f.run(f.shard.heartbeat(new HeartbeatRequest(group, d.groupEpoch(), m.memberId()), f.nowMs));
                    f.run(f.shard.syncGroup(new SyncGroupRequest(group, d.groupEpoch(), m.memberId()), f.nowMs));
                }
            }
            case 8, 9 -> f.commitV0(group, topic, rnd.nextInt(4), rnd.nextInt(1000));
            case 10 -> {
                if (m != null && !m.assignment().isEmpty()) {
                    TopicPartitions tp = m.assignment().get(0);
                    f.commit(
                            (short) 1,
                            group,
                            m.memberId(),
                            m.memberEpoch(),
                            tp.topic(),
                            tp.partitions().get(0),
                            rnd.nextInt(1000));
                } else {
                    f.commit((short) 1, group, null, -1, topic, 0, rnd.nextInt(1000));
                }
            }
            case 11 ->
                f.run(f.shard.deleteOffsets(
                        new OffsetDeleteRequest(group, List.of(new TopicPartitions(topic, List.of(0, 1)))),
                        ShardFixture.ORIGIN,
                        f.nowMs));
            case 12 -> {
                if (rnd.nextInt(4) == 0) {
                    f.run(f.shard.deleteGroup(group, ShardFixture.ORIGIN, f.nowMs));
                } else if (rnd.nextInt(4) == 0) {
                    f.run(f.shard.deleteTopicOffsets(Set.of(topic), f.nowMs));
                }
            }
            case 13 -> {
                f.topics.merge(topic, 1, Integer::sum);
                f.run(f.shard.onMetadataChange(f.nowMs));
            }
            default -> {
                // Time passes: sometimes a little, sometimes past sessions or retention.
                int r = rnd.nextInt(10);
                f.nowMs += r < 7 ? 1_000 : r < 9 ? 50_000 : 8L * 24 * 60 * 60 * 1000;
                f.run(f.shard.poll(f.nowMs));
            }
        }
    }

    private static void checkNoPartitionOwnedTwice(ShardFixture f) {
        for (String g : GROUPS) {
            Set<String> seen = new HashSet<>();
            for (DescribedMember m : f.shard.describeGroup(g).members()) {
                for (List<TopicPartitions> list : List.of(m.assignment(), m.pendingRevocation())) {
                    for (TopicPartitions tp : list) {
                        for (int p : tp.partitions()) {
                            assertThat(seen.add(tp.topic() + "-" + p))
                                    .as("%s-%d twice in %s", tp.topic(), p, g)
                                    .isTrue();
                        }
                    }
                }
            }
        }
    }
}
