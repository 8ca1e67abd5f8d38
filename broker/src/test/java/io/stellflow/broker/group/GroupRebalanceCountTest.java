package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What {@code stellflow.group.rebalance.count} counts: one per group epoch bump of our protocol and
 * per generation bump of a classic group, made by a command or a timer, and nothing for a load.
 */
class GroupRebalanceCountTest {

    @Test
    void everyGroupEpochBumpOfOurProtocolCountsOnce() {
        ShardFixture f = new ShardFixture();
        f.topics.put("t", 4);
        ConsumerGroupHeartbeatResponse a = f.heartbeat("g", null, 0, null, List.of("t"), null);
        assertThat(f.rebalances).hasValue(1);
        ConsumerGroupHeartbeatResponse b = f.heartbeat("g", null, 0, null, List.of("t"), null);
        assertThat(f.rebalances).hasValue(2);
        // A heartbeat that changes nothing is no rebalance.
        f.heartbeat("g", b.memberId(), b.memberEpoch(), null, null, null);
        assertThat(f.rebalances).hasValue(2);
        // More partitions for the subscribed topic: a new target at a new group epoch.
        f.topics.put("t", 8);
        f.run(f.shard.onMetadataChange(f.nowMs));
        f.heartbeat("g", a.memberId(), a.memberEpoch(), null, null, null);
        f.run(f.shard.poll(f.nowMs));
        // A leaves.
        f.heartbeat("g", a.memberId(), -1, null, null, null);
        int epoch = f.shard.describeGroup("g").groupEpoch();
        assertThat(epoch).isGreaterThanOrEqualTo(4);
        assertThat(f.rebalances).hasValue(epoch);
    }

    @Test
    void everyClassicGenerationCountsOnceJoinsAndEvictions() {
        ShardFixture f = new ShardFixture();
        JoinGroupResponse first =
                f.run(f.shard.joinGroup(new JoinGroupRequest("v0", "", 30_000), ShardFixture.ORIGIN, f.nowMs));
        f.run(f.shard.joinGroup(new JoinGroupRequest("v0", "", 30_000), ShardFixture.ORIGIN, f.nowMs));
        assertThat(f.rebalances).hasValue(2);
        // Both sessions end: one generation per eviction, by the timer.
        f.run(f.shard.poll(f.nowMs + 30_000));
        assertThat(f.shard.describeGroup("v0").members()).isEmpty();
        assertThat(f.rebalances).hasValue(4);
        assertThat(first.generationId()).isEqualTo(1);
        // A rejected join is no rebalance.
        f.run(f.shard.joinGroup(new JoinGroupRequest("v0", "", 10), ShardFixture.ORIGIN, f.nowMs));
        assertThat(f.rebalances).hasValue(4);
    }

    @Test
    void loadingAShardCountsNothing() {
        ShardFixture f = new ShardFixture();
        f.topics.put("t", 4);
        f.heartbeat("g", null, 0, null, List.of("t"), null);
        f.heartbeat("g", null, 0, null, List.of("t"), null);
        f.run(f.shard.joinGroup(new JoinGroupRequest("v0", "", 30_000), ShardFixture.ORIGIN, f.nowMs));
        assertThat(f.rebalances.get()).isGreaterThanOrEqualTo(3);

        AtomicInteger afterLoad = new AtomicInteger();
        GroupShard fresh = f.replayed(f.nowMs, afterLoad::incrementAndGet);
        assertThat(fresh.groupCount()).isEqualTo(2);
        assertThat(afterLoad).hasValue(0);
        // The loaded groups count their next live bumps.
        fresh.joinGroup(new JoinGroupRequest("v0", "", 30_000), ShardFixture.ORIGIN, f.nowMs);
        assertThat(afterLoad).hasValue(1);
    }
}
