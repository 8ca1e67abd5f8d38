package io.stellflow.broker.group;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link GroupShard} under test with an explicit clock and topic metadata, and the log of every
 * record its commands produced (so a test can replay it into a fresh shard).
 */
final class ShardFixture {
    static final RequestOrigin ORIGIN = RequestOrigin.anonymous("app", "/10.0.0.7");

    final Map<String, Integer> topics = new HashMap<>();
    final GroupConfig config;
    final GroupShard shard;
    final List<CoordinatorRecord> log = new ArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    long nowMs = 1_000_000;

    ShardFixture(GroupConfig config) {
        this.config = config;
        this.shard = new GroupShard(config, t -> topics.getOrDefault(t, -1), () -> "id" + ids.incrementAndGet());
        shard.onLoaded(nowMs); // an empty partition, loaded
    }

    ShardFixture() {
        this(GroupConfig.defaults());
    }

    <T> T run(CoordinatorResult<T> r) {
        log.addAll(r.records());
        return r.response();
    }

    short commit(short version, String group, String memberId, int epoch, String topic, int partition, long offset) {
        OffsetCommitRequest req = new OffsetCommitRequest(
                group,
                memberId,
                epoch,
                List.of(new OffsetCommitTopic(topic, List.of(new OffsetCommitPartition(partition, offset, "md")))));
        OffsetCommitResponse r = run(shard.commitOffsets(req, version, ORIGIN, nowMs));
        return r.topics().get(0).partitions().get(0).errorCode();
    }

    short commitV0(String group, String topic, int partition, long offset) {
        return commit((short) 0, group, null, -1, topic, partition, offset);
    }

    long fetch(String group, String topic, int partition) {
        return shard.fetchOffsets(
                        new OffsetFetchRequest(
                                group, List.of(new OffsetFetchRequest.OffsetFetchTopic(topic, List.of(partition)))),
                        (short) 0)
                .topics()
                .get(0)
                .partitions()
                .get(0)
                .offset();
    }

    ConsumerGroupHeartbeatResponse heartbeat(
            String group,
            String memberId,
            int epoch,
            String instanceId,
            List<String> subs,
            List<TopicPartitions> owned) {
        return run(shard.consumerGroupHeartbeat(
                new ConsumerGroupHeartbeatRequest(group, memberId, epoch, instanceId, null, -1, subs, null, owned),
                ORIGIN,
                nowMs));
    }

    /** The stored state as hex key to hex value, for comparisons. */
    static Map<String, String> asMap(List<CoordinatorRecord> records) {
        Map<String, String> m = new LinkedHashMap<>();
        HexFormat hex = HexFormat.of();
        for (CoordinatorRecord r : records) {
            if (r.value() == null) {
                m.remove(hex.formatHex(r.key()));
            } else {
                m.remove(hex.formatHex(r.key()));
                m.put(hex.formatHex(r.key()), hex.formatHex(r.value()));
            }
        }
        return m;
    }

    /** A fresh shard that loads {@link #log} as the runtime would after a failover. */
    GroupShard replayed(long loadNowMs) {
        GroupShard fresh = new GroupShard(config, t -> topics.getOrDefault(t, -1), () -> "other");
        long offset = 0;
        for (CoordinatorRecord r : log) {
            fresh.replay(offset++, r.key(), r.value());
        }
        fresh.onLoaded(loadNowMs);
        return fresh;
    }
}
