package io.stellflow.client;

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
 */
public record ConsumerConfig(
        ClientConfig common,
        int fetchMaxWaitMs,
        int fetchMinBytes,
        int fetchMaxBytes,
        int maxPartitionFetchBytes,
        String autoOffsetReset,
        boolean checkCrcs) {

    /** {@code max.partition.fetch.bytes} when not set: 4 MiB. */
    public static final int DEFAULT_MAX_PARTITION_FETCH_BYTES = 4 << 20;

    public static ConsumerConfig from(Properties props) {
        ConfigValues v = new ConfigValues(props);
        String reset = v.string("auto.offset.reset", "latest").toLowerCase(Locale.ROOT);
        if (!reset.equals("earliest") && !reset.equals("latest") && !reset.equals("none")) {
            throw new IllegalArgumentException(
                    "invalid value for auto.offset.reset: '" + reset + "' (earliest, latest or none)");
        }
        return new ConsumerConfig(
                ClientConfig.from(props, "stellflow-consumer"),
                v.intValue("fetch.max.wait.ms", 500, 0, Integer.MAX_VALUE),
                v.intValue("fetch.min.bytes", 1, 0, Integer.MAX_VALUE),
                v.intValue("fetch.max.bytes", 50 << 20, 1, 64 << 20),
                v.intValue("max.partition.fetch.bytes", DEFAULT_MAX_PARTITION_FETCH_BYTES, 1, 64 << 20),
                reset,
                v.booleanValue("check.crcs", true));
    }
}
