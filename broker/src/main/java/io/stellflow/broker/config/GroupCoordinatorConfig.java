package io.stellflow.broker.config;

import static io.stellflow.server.common.config.ConfigValues.intValue;
import static io.stellflow.server.common.config.ConfigValues.longValue;
import static io.stellflow.server.common.config.ConfigValues.string;

import io.stellflow.broker.group.GroupConfig;
import io.stellflow.server.common.config.ConfigException;
import java.util.Properties;
import java.util.Set;

/**
 * Settings of the group coordinator and its topic {@code __consumer_offsets} (issue #19), Kafka's key
 * names and defaults.
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Default</th><th>Rule</th></tr>
 *   <tr><td>offsets.topic.num.partitions</td><td>50</td><td>1..{@value BrokerConfig#MAX_PARTITIONS_PER_TOPIC};
 *       partitions of {@code __consumer_offsets} when it is created (a group's partition depends on it,
 *       so it never changes afterwards)</td></tr>
 *   <tr><td>offsets.topic.replication.factor</td><td>3</td><td>1..32767; replicas of {@code
 *       __consumer_offsets}, capped to the brokers registered when it is created</td></tr>
 *   <tr><td>offsets.topic.segment.bytes</td><td>104857600</td><td>&gt;= 1024; its {@code segment.bytes}
 *       (small segments let compaction reach more of the log)</td></tr>
 *   <tr><td>group.coordinator.threads</td><td>1</td><td>1..64 coordinator runtime threads</td></tr>
 *   <tr><td>offsets.commit.timeout.ms</td><td>5000</td><td>&gt;= 1; a coordinator write not below the
 *       high watermark after this long fails with COORDINATOR_NOT_AVAILABLE</td></tr>
 *   <tr><td>offsets.load.buffer.size</td><td>5242880</td><td>&gt;= 1; bytes read per step when a
 *       new leader loads a partition</td></tr>
 *   <tr><td>group.min.session.timeout.ms</td><td>6000</td><td>&gt;= 1; lowest v0 JoinGroup
 *       sessionTimeoutMs accepted</td></tr>
 *   <tr><td>group.max.session.timeout.ms</td><td>1800000</td><td>&gt;= group.min.session.timeout.ms</td></tr>
 *   <tr><td>group.consumer.session.timeout.ms</td><td>45000</td><td>&gt;= 1; session of a member of
 *       our protocol (ConsumerGroupHeartbeat)</td></tr>
 *   <tr><td>group.consumer.heartbeat.interval.ms</td><td>2000</td><td>1..session timeout - 1</td></tr>
 *   <tr><td>group.consumer.assignors</td><td>uniform</td><td>uniform or range: the server assignor of a
 *       group whose members name none</td></tr>
 *   <tr><td>group.max.size</td><td>1000</td><td>&gt;= 1 members per group</td></tr>
 *   <tr><td>offsets.retention.minutes</td><td>10080 (7 days)</td><td>&gt;= 1; offsets of an empty group
 *       expire this long after it became empty</td></tr>
 *   <tr><td>offsets.retention.check.interval.ms</td><td>600000</td><td>&gt;= 1</td></tr>
 *   <tr><td>offset.metadata.max.bytes</td><td>4096</td><td>&gt;= 1; longer commit metadata is
 *       refused</td></tr>
 * </table>
 *
 * <p>Thread-safety: immutable.
 *
 * @param numPartitions {@code offsets.topic.num.partitions}
 * @param replicationFactor {@code offsets.topic.replication.factor}
 * @param segmentBytes {@code offsets.topic.segment.bytes}
 * @param threads {@code group.coordinator.threads}
 * @param commitTimeoutMs {@code offsets.commit.timeout.ms}
 * @param loadBufferBytes {@code offsets.load.buffer.size}
 * @param group the group state machines' settings ({@code group.*}, {@code offsets.retention.*},
 *     {@code offset.metadata.max.bytes})
 */
public record GroupCoordinatorConfig(
        int numPartitions,
        short replicationFactor,
        int segmentBytes,
        int threads,
        long commitTimeoutMs,
        int loadBufferBytes,
        GroupConfig group) {

    /** The keys read here. */
    public static final Set<String> KEYS = Set.of(
            "offsets.topic.num.partitions",
            "offsets.topic.replication.factor",
            "offsets.topic.segment.bytes",
            "group.coordinator.threads",
            "offsets.commit.timeout.ms",
            "offsets.load.buffer.size",
            "group.min.session.timeout.ms",
            "group.max.session.timeout.ms",
            "group.consumer.session.timeout.ms",
            "group.consumer.heartbeat.interval.ms",
            "group.consumer.assignors",
            "group.max.size",
            "offsets.retention.minutes",
            "offsets.retention.check.interval.ms",
            "offset.metadata.max.bytes");

    /** Every key at its default. */
    public static final GroupCoordinatorConfig DEFAULTS = parse(new Properties());

    /**
     * Reads and validates the keys.
     *
     * @throws ConfigException naming the bad key and value
     */
    public static GroupCoordinatorConfig parse(Properties props) {
        return new GroupCoordinatorConfig(
                intValue(props, "offsets.topic.num.partitions", 50, 1, BrokerConfig.MAX_PARTITIONS_PER_TOPIC),
                (short) intValue(props, "offsets.topic.replication.factor", 3, 1, Short.MAX_VALUE),
                intValue(props, "offsets.topic.segment.bytes", 100 << 20, 1024, Integer.MAX_VALUE),
                intValue(props, "group.coordinator.threads", 1, 1, 64),
                longValue(props, "offsets.commit.timeout.ms", 5_000, 1, Long.MAX_VALUE / 2),
                intValue(props, "offsets.load.buffer.size", 5 << 20, 1, Integer.MAX_VALUE),
                group(props));
    }

    private static GroupConfig group(Properties props) {
        GroupConfig d = GroupConfig.defaults();
        int minSession =
                intValue(props, "group.min.session.timeout.ms", d.classicMinSessionTimeoutMs(), 1, Integer.MAX_VALUE);
        int maxSession = intValue(
                props, "group.max.session.timeout.ms", d.classicMaxSessionTimeoutMs(), minSession, Integer.MAX_VALUE);
        int session = intValue(
                props, "group.consumer.session.timeout.ms", d.consumerSessionTimeoutMs(), 2, Integer.MAX_VALUE);
        int heartbeat = intValue(
                props, "group.consumer.heartbeat.interval.ms", d.consumerHeartbeatIntervalMs(), 1, session - 1);
        String assignor = string(props, "group.consumer.assignors", d.defaultAssignor())
                .split(",")[0]
                .trim();
        long retentionMinutes = longValue(
                props, "offsets.retention.minutes", d.offsetsRetentionMs() / 60_000, 1, Long.MAX_VALUE / 60_000);
        long retentionCheckMs = longValue(
                props,
                "offsets.retention.check.interval.ms",
                d.offsetsRetentionCheckIntervalMs(),
                1,
                Long.MAX_VALUE / 2);
        int maxSize = intValue(props, "group.max.size", d.maxGroupSize(), 1, Integer.MAX_VALUE);
        int metadataMax =
                intValue(props, "offset.metadata.max.bytes", d.offsetMetadataMaxBytes(), 1, Integer.MAX_VALUE);
        try {
            return new GroupConfig(
                    minSession,
                    maxSession,
                    session,
                    heartbeat,
                    d.defaultRebalanceTimeoutMs(),
                    assignor,
                    retentionMinutes * 60_000,
                    retentionCheckMs,
                    maxSize,
                    metadataMax,
                    d.offsetHistorySlots(),
                    d.journalConsumerCommits());
        } catch (IllegalArgumentException e) {
            // The range checks above leave only the assignor's name to fail here.
            throw new ConfigException("group.consumer.assignors", assignor, e.getMessage());
        }
    }
}
