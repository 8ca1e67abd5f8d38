package io.stellflow.client;

import io.stellflow.protocol.WireWriter;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Properties;

/**
 * Consumer settings (Kafka names). Immutable; validated at construction.
 *
 * @param common the shared client settings
 * @param fetchMaxWaitMs {@code fetch.max.wait.ms} (default 500): broker long-poll ceiling
 * @param fetchMinBytes {@code fetch.min.bytes} (default 1)
 * @param fetchMaxBytes {@code fetch.max.bytes} (default 52428800): response soft cap
 * @param maxPartitionFetchBytes {@code max.partition.fetch.bytes} (default 4194304, Kafka's is 1 MiB):
 *     one Fetch per partition is in flight, so this is the data per round trip; on the 2-core
 *     development machine 4 MiB consumed 186-205 MB/s of 1 KiB records where 1 MiB gave 139
 *     (2026-11-29, busy machine, {@code stellflow-perf consume}, 1 GiB)
 * @param autoOffsetReset {@code auto.offset.reset}: {@code earliest}, {@code latest} (default) or
 *     {@code none}; used when a partition has no position or its position is out of range
 * @param checkCrcs {@code check.crcs} (default true, as Kafka): verify each fetched batch's CRC-32C
 *     before its records are handed out; a mismatch fails {@link StellflowConsumer#poll} with
 *     CORRUPT_MESSAGE instead of returning damaged records. false skips only the CRC (the batch and
 *     record structure is still checked), saving its cost per fetched byte
 * @param compressionMaxDecompressedBytes {@code compression.max.decompressed.bytes} (default 67108864,
 *     {@value #MIN_COMPRESSION_MAX_DECOMPRESSED_BYTES}..{@value #MAX_COMPRESSION_MAX_DECOMPRESSED_BYTES}): the most one fetched compressed
 *     batch may decompress to; a larger one fails {@link StellflowConsumer#poll} with INVALID_RECORD
 *     at its offset. The broker's key of the same name and default, so every batch a default broker
 *     accepts is read by a default consumer; not {@code fetch.max.bytes}, which bounds an answer's
 *     compressed bytes (Kafka's consumer has no such cap; it guards this one's expansion buffer)
 * @param groupId {@code group.id} (default none): the consumer group; needed by {@link
 *     StellflowConsumer#subscribe} and by commits and {@link StellflowConsumer#committed}
 * @param groupInstanceId {@code group.instance.id} (default none): a static member's stable id; a
 *     restart within the session timeout keeps its assignment (it leaves with epoch -2, not -1), a
 *     second consumer with the same id is refused (UNRELEASED_INSTANCE_ID); needs {@code group.id}
 * @param enableAutoCommit {@code enable.auto.commit} (default true when {@code group.id} is set):
 *     commit each partition's position every {@code auto.commit.interval.ms}, before a revocation
 *     and on close; true without {@code group.id} is an error
 * @param autoCommitIntervalMs {@code auto.commit.interval.ms} (default 5000)
 * @param groupRemoteAssignor {@code group.remote.assignor}: {@code uniform} or {@code range}, the
 *     coordinator's assignor this member asks for; null (default) leaves the broker's default
 * @param maxPollIntervalMs {@code max.poll.interval.ms} (default 300000): sent as the member's
 *     rebalance timeout, the time the coordinator gives it to revoke partitions before it fences it.
 *     Heartbeats go out from inside the consumer's calls ({@link StellflowConsumer#poll} and the
 *     blocking ones), so a consumer that does not call poll within the session timeout the broker
 *     sets (45 s by default) is removed from the group
 * @param defaultApiTimeoutMs {@code default.api.timeout.ms} (default 60000): how long {@link
 *     StellflowConsumer#commitSync()}, {@link StellflowConsumer#committed} and {@link
 *     StellflowConsumer#close} wait for the coordinator when not given a timeout
 * @param isolationLevel {@code isolation.level}: {@code read_uncommitted} (default, 0) or {@code
 *     read_committed} (1), sent as the Fetch and ListOffsets isolationLevel: read_committed reads
 *     up to the last stable offset and leaves out the records of aborted transactions ({@code
 *     docs/exactly-once.md}, "read_committed consumers")
 */
public record ConsumerConfig(
        ClientConfig common,
        int fetchMaxWaitMs,
        int fetchMinBytes,
        int fetchMaxBytes,
        int maxPartitionFetchBytes,
        String autoOffsetReset,
        boolean checkCrcs,
        int compressionMaxDecompressedBytes,
        String groupId,
        String groupInstanceId,
        boolean enableAutoCommit,
        int autoCommitIntervalMs,
        String groupRemoteAssignor,
        int maxPollIntervalMs,
        int defaultApiTimeoutMs,
        byte isolationLevel) {

    /** {@code max.partition.fetch.bytes} when not set: 4 MiB. */
    public static final int DEFAULT_MAX_PARTITION_FETCH_BYTES = 4 << 20;

    /**
     * {@code compression.max.decompressed.bytes} when not set: the broker's default ({@link
     * CompressedRecordsValidator#DEFAULT_MAX_DECOMPRESSED_BYTES}, 64 MiB), so no batch a default
     * broker accepted is refused here.
     */
    public static final int DEFAULT_COMPRESSION_MAX_DECOMPRESSED_BYTES =
            (int) CompressedRecordsValidator.DEFAULT_MAX_DECOMPRESSED_BYTES;

    /** The smallest {@code compression.max.decompressed.bytes}: 64 KiB, the broker's lower bound. */
    public static final int MIN_COMPRESSION_MAX_DECOMPRESSED_BYTES = 64 * 1024;

    /**
     * The largest {@code compression.max.decompressed.bytes}: 1 GiB. The expanded batch (its header
     * and records) lives in one buffer, at most 2^31-1 bytes, which grows by doubling.
     */
    public static final int MAX_COMPRESSION_MAX_DECOMPRESSED_BYTES = 1 << 30;

    /** {@code isolation.level} read_uncommitted: the Fetch isolationLevel 0. */
    public static final byte READ_UNCOMMITTED = 0;
    /** {@code isolation.level} read_committed: the Fetch isolationLevel 1. */
    public static final byte READ_COMMITTED = 1;

    /** Whether {@code isolation.level=read_committed}. */
    public boolean readCommitted() {
        return isolationLevel == READ_COMMITTED;
    }

    public static ConsumerConfig from(Properties props) {
        ClientKeys.check(props, ClientKeys.CONSUMER, "consumer");
        ConfigValues v = new ConfigValues(props);
        String reset = v.string("auto.offset.reset", "latest").toLowerCase(Locale.ROOT);
        if (!reset.equals("earliest") && !reset.equals("latest") && !reset.equals("none")) {
            throw new IllegalArgumentException(
                    "invalid value for auto.offset.reset: '" + reset + "' (earliest, latest or none)");
        }
        String isolation =
                v.string("isolation.level", "read_uncommitted").trim().toLowerCase(Locale.ROOT);
        if (!isolation.equals("read_uncommitted") && !isolation.equals("read_committed")) {
            throw new IllegalArgumentException(
                    "invalid value for isolation.level: '" + isolation + "' (read_uncommitted or read_committed)");
        }
        String groupId = emptyToNull(v.string("group.id", null));
        String instanceId = emptyToNull(v.string("group.instance.id", null));
        requireWireLength("group.id", groupId);
        requireWireLength("group.instance.id", instanceId);
        if (instanceId != null && groupId == null) {
            throw new IllegalArgumentException("group.instance.id '" + instanceId + "' needs group.id");
        }
        boolean autoCommit = v.booleanValue("enable.auto.commit", groupId != null);
        if (autoCommit && groupId == null) {
            throw new IllegalArgumentException("enable.auto.commit=true needs group.id");
        }
        String assignor = emptyToNull(v.string("group.remote.assignor", null));
        if (assignor != null) {
            assignor = assignor.toLowerCase(Locale.ROOT);
            if (!assignor.equals("uniform") && !assignor.equals("range")) {
                throw new IllegalArgumentException(
                        "invalid value for group.remote.assignor: '" + assignor + "' (uniform or range)");
            }
        }
        return new ConsumerConfig(
                ClientConfig.from(props, "stellflow-consumer"),
                v.intValue("fetch.max.wait.ms", 500, 0, Integer.MAX_VALUE),
                v.intValue("fetch.min.bytes", 1, 0, Integer.MAX_VALUE),
                v.intValue("fetch.max.bytes", 50 << 20, 1, 64 << 20),
                v.intValue("max.partition.fetch.bytes", DEFAULT_MAX_PARTITION_FETCH_BYTES, 1, 64 << 20),
                reset,
                v.booleanValue("check.crcs", true),
                v.intValue(
                        "compression.max.decompressed.bytes",
                        DEFAULT_COMPRESSION_MAX_DECOMPRESSED_BYTES,
                        MIN_COMPRESSION_MAX_DECOMPRESSED_BYTES,
                        MAX_COMPRESSION_MAX_DECOMPRESSED_BYTES),
                groupId,
                instanceId,
                autoCommit,
                v.intValue("auto.commit.interval.ms", 5000, 1, Integer.MAX_VALUE),
                assignor,
                v.intValue("max.poll.interval.ms", 300_000, 1, Integer.MAX_VALUE),
                v.intValue("default.api.timeout.ms", 60_000, 1, Integer.MAX_VALUE),
                isolation.equals("read_committed") ? READ_COMMITTED : READ_UNCOMMITTED);
    }

    /**
     * Refuses an id the wire cannot carry (a protocol STRING is at most {@link
     * WireWriter#MAX_STRING_BYTES} UTF-8 bytes), so the mistake is named at construction rather than
     * surfacing later as a failed request.
     */
    private static void requireWireLength(String key, String value) {
        if (value == null) {
            return;
        }
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > WireWriter.MAX_STRING_BYTES) {
            throw new IllegalArgumentException(
                    key + " is " + bytes + " UTF-8 bytes; the protocol allows at most " + WireWriter.MAX_STRING_BYTES);
        }
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
