package io.stellflow.broker.config;

import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.storage.LogCompression;
import io.stellflow.storage.LogConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A broker's effective static configuration as key/value entries, for DescribeBrokerConfigs (apiKey
 * 28): the main keys with the value the broker runs with (an alias resolved: {@code
 * log.retention.hours=1} shows as {@code log.retention.ms=3600000}), marked STATIC when the key or
 * one of its aliases was given and DEFAULT otherwise; then every other known key that was given, with
 * its value as given. Values of keys whose name suggests a secret ({@code password}, {@code secret},
 * {@code token}, {@code headers}: OTLP exporter headers carry credentials) are not reported (null).
 *
 * <p>Thread-safety: stateless; the entries are computed from an immutable {@link BrokerConfig}.
 */
public final class EffectiveBrokerConfig {
    /** One reported key: its value (null when sensitive) and whether the value was given. */
    public record Entry(String key, String value, boolean given) {}

    private EffectiveBrokerConfig() {}

    /** The entries of {@code config}, sorted by key. */
    public static List<Entry> of(BrokerConfig config) {
        Map<String, String> given = config.staticValues();
        LogConfig log = config.logConfig();
        ClusterConfig cluster = config.cluster();
        Map<String, String[]> effective = new LinkedHashMap<>(); // key -> {value, aliases...}
        effective.put("node.id", new String[] {Integer.toString(config.brokerId()), "broker.id"});
        effective.put("process.roles", new String[] {roles(cluster)});
        effective.put("listeners", new String[] {config.listener().toString()});
        effective.put("advertised.listeners", new String[] {
            (config.advertisedListener() == null ? config.listener() : config.advertisedListener()).toString()
        });
        effective.put("log.dirs", new String[] {join(config.logDirs()), "log.dir"});
        effective.put("num.partitions", new String[] {Integer.toString(config.numPartitions())});
        effective.put(
                "default.replication.factor", new String[] {Integer.toString(cluster.defaultReplicationFactor())});
        effective.put("min.insync.replicas", new String[] {Integer.toString(config.minInsyncReplicas())});
        effective.put("auto.create.topics.enable", new String[] {Boolean.toString(config.autoCreateTopicsEnable())});
        effective.put("message.max.bytes", new String[] {Integer.toString(config.messageMaxBytes())});
        effective.put("log.segment.bytes", new String[] {Integer.toString(log.segmentBytes())});
        effective.put(
                "log.retention.ms",
                new String[] {Long.toString(log.retentionMs()), "log.retention.minutes", "log.retention.hours"});
        effective.put("log.retention.bytes", new String[] {Long.toString(log.retentionBytes())});
        effective.put("log.roll.ms", new String[] {Long.toString(log.segmentMs()), "log.roll.hours"});
        effective.put("log.cleanup.policy", new String[] {log.cleanupPolicy().toString()});
        effective.put("log.flush.interval.messages", new String[] {Long.toString(log.flushMessages())});
        effective.put("log.flush.interval.ms", new String[] {Long.toString(log.flushMs())});
        effective.put("log.preallocate", new String[] {Boolean.toString(log.preallocate())});
        LogCompression compression = log.compression();
        effective.put("compression.type", new String[] {compression.name()});
        effective.put("compression.produce.policy", new String[] {compression.producePolicy()});
        effective.put(
                "compression.max.decompressed.bytes",
                new String[] {Long.toString(config.compressionMaxDecompressedBytes())});
        effective.put(
                CompressionConfig.GZIP_LEVEL,
                new String[] {Integer.toString(compression.levels().gzipLevel())});
        effective.put(
                CompressionConfig.LZ4_LEVEL,
                new String[] {Integer.toString(compression.levels().lz4Level())});
        effective.put(
                CompressionConfig.ZSTD_LEVEL,
                new String[] {Integer.toString(compression.levels().zstdLevel())});
        effective.put("replica.lag.time.max.ms", new String[] {Long.toString(config.replicaLagTimeMaxMs())});
        effective.put("transport", new String[] {config.transport().configName()});
        effective.put("num.network.threads", new String[] {Integer.toString(config.numNetworkThreads())});
        effective.put("num.io.threads", new String[] {Integer.toString(config.numIoThreads())});
        effective.put("num.append.agents", new String[] {Integer.toString(config.numAppendAgents())});
        Map<String, Entry> out = new TreeMap<>();
        effective.forEach((key, v) -> {
            boolean set = given.containsKey(key);
            for (int i = 1; i < v.length; i++) {
                set |= given.containsKey(v[i]);
            }
            out.put(key, entry(key, v[0], set));
        });
        given.forEach((key, value) -> out.putIfAbsent(key, entry(key, value, true)));
        return new ArrayList<>(out.values());
    }

    /** True for a key whose value may be a credential. */
    static boolean sensitive(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return k.contains("password") || k.contains("secret") || k.contains("token") || k.contains("headers");
    }

    private static Entry entry(String key, String value, boolean given) {
        return new Entry(key, sensitive(key) ? null : value, given);
    }

    private static String roles(ClusterConfig cluster) {
        return cluster.isBroker() && cluster.isController()
                ? "broker,controller"
                : cluster.isBroker() ? "broker" : "controller";
    }

    private static String join(List<Path> dirs) {
        StringBuilder sb = new StringBuilder();
        for (Path d : dirs) {
            sb.append(sb.isEmpty() ? "" : ",").append(d);
        }
        return sb.toString();
    }
}
