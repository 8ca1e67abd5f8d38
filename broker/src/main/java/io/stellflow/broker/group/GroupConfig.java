package io.stellflow.broker.group;

/**
 * The group coordinator's settings (Kafka's names in brackets). Validated at construction: a bad
 * value throws {@link IllegalArgumentException} naming the setting and the value.
 *
 * @param classicMinSessionTimeoutMs lowest v0 JoinGroup {@code sessionTimeoutMs} accepted ({@code
 *     group.min.session.timeout.ms}, 6000); below it JoinGroup answers INVALID_REQUEST (spec §6.10)
 * @param classicMaxSessionTimeoutMs highest v0 JoinGroup {@code sessionTimeoutMs} accepted ({@code
 *     group.max.session.timeout.ms}, 1800000)
 * @param consumerSessionTimeoutMs session timeout of our protocol's members, set by the broker
 *     ({@code group.consumer.session.timeout.ms}, 45000)
 * @param consumerHeartbeatIntervalMs heartbeat interval handed to our protocol's stable members
 *     ({@code group.consumer.heartbeat.interval.ms}, 2000: Kafka's is 5000, but a heartbeat that
 *     changes nothing writes nothing here, and a member learns of a rebalance at its next heartbeat,
 *     so the interval bounds how fast a group reacts); below the session timeout
 * @param defaultRebalanceTimeoutMs revocation deadline of a member that sends -1 when it joins
 *     (300000, the Java consumer's {@code max.poll.interval.ms})
 * @param defaultAssignor server assignor of a group whose members name none ({@code
 *     group.consumer.assignors}' first entry, "uniform")
 * @param offsetsRetentionMs how long the offsets of an empty group are kept, from when it became
 *     empty ({@code offsets.retention.minutes}, 7 days; KIP-211)
 * @param offsetsRetentionCheckIntervalMs how often expired offsets are looked for ({@code
 *     offsets.retention.check.interval.ms}, 600000)
 * @param maxGroupSize most members of one group ({@code group.max.size}, 1000)
 * @param offsetMetadataMaxBytes longest commit metadata in UTF-8 bytes ({@code
 *     offset.metadata.max.bytes}, 4096); longer: INVALID_REQUEST (spec §6.6)
 * @param offsetHistorySlots journal entries kept per group (a ring of keys, so compaction bounds
 *     it), 256
 * @param journalConsumerCommits whether forward commits by consumers are journaled too (default
 *     false: they are the consumers' routine progress and would push resets out of the ring)
 */
public record GroupConfig(
        int classicMinSessionTimeoutMs,
        int classicMaxSessionTimeoutMs,
        int consumerSessionTimeoutMs,
        int consumerHeartbeatIntervalMs,
        int defaultRebalanceTimeoutMs,
        String defaultAssignor,
        long offsetsRetentionMs,
        long offsetsRetentionCheckIntervalMs,
        int maxGroupSize,
        int offsetMetadataMaxBytes,
        int offsetHistorySlots,
        boolean journalConsumerCommits) {

    public GroupConfig {
        positive("group.min.session.timeout.ms", classicMinSessionTimeoutMs);
        positive("group.max.session.timeout.ms", classicMaxSessionTimeoutMs);
        if (classicMaxSessionTimeoutMs < classicMinSessionTimeoutMs) {
            throw new IllegalArgumentException("group.max.session.timeout.ms " + classicMaxSessionTimeoutMs
                    + " is below group.min.session.timeout.ms " + classicMinSessionTimeoutMs);
        }
        positive("group.consumer.session.timeout.ms", consumerSessionTimeoutMs);
        positive("group.consumer.heartbeat.interval.ms", consumerHeartbeatIntervalMs);
        if (consumerHeartbeatIntervalMs >= consumerSessionTimeoutMs) {
            throw new IllegalArgumentException("group.consumer.heartbeat.interval.ms " + consumerHeartbeatIntervalMs
                    + " must be below group.consumer.session.timeout.ms " + consumerSessionTimeoutMs);
        }
        positive("rebalance timeout", defaultRebalanceTimeoutMs);
        if (!Assignors.isKnown(defaultAssignor)) {
            throw new IllegalArgumentException(
                    "group.consumer.assignors: unknown assignor " + defaultAssignor + ", known: " + Assignors.NAMES);
        }
        if (offsetsRetentionMs <= 0) {
            throw new IllegalArgumentException(
                    "offsets.retention.minutes must be positive, got ms " + offsetsRetentionMs);
        }
        if (offsetsRetentionCheckIntervalMs <= 0) {
            throw new IllegalArgumentException(
                    "offsets.retention.check.interval.ms must be positive, got " + offsetsRetentionCheckIntervalMs);
        }
        positive("group.max.size", maxGroupSize);
        positive("offset.metadata.max.bytes", offsetMetadataMaxBytes);
        if (offsetHistorySlots <= 0 || offsetHistorySlots > 65_536) {
            throw new IllegalArgumentException("offset history slots must be in 1..65536, got " + offsetHistorySlots);
        }
    }

    /** Kafka's defaults (see the parameters). */
    public static GroupConfig defaults() {
        return new GroupConfig(
                6_000,
                1_800_000,
                45_000,
                2_000,
                300_000,
                UniformAssignor.NAME,
                7L * 24 * 60 * 60 * 1000,
                600_000,
                1_000,
                4_096,
                256,
                false);
    }

    private static void positive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }
}
