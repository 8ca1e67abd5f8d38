package io.stellflow.broker.telemetry;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.stellflow.server.common.file.FileErrors;
import io.stellflow.server.common.telemetry.InstrumentCallbacks;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The gauges an on-call engineer reads for a broker's capacity and balance (issue 22, {@code
 * docs/metrics-additions.md}):
 *
 * <ul>
 *   <li>{@code stellflow.log.dir.free} ({@code By}, {@code node.id}, {@code log.dir}): the usable bytes
 *       of the file system holding each {@code log.dirs} entry ({@code FileStore#getUsableSpace}, one
 *       {@code statfs} per dir per collection); no sample for a dir that cannot be read (gone);
 *   <li>{@code stellflow.log.dir.used} ({@code By}, {@code node.id}, {@code log.dir}): the bytes of this
 *       broker's segment files ({@code .log}, not the preallocated indexes) in each dir, summed from the
 *       logs' in-memory segment sizes;
 *   <li>{@code stellflow.partition.count} and {@code stellflow.partition.leader.count} ({@code
 *       {partition}}, {@code node.id}): the partitions this broker hosts a replica of, and those it
 *       leads.
 * </ul>
 *
 * <p>Cost: read at collection time only (a scrape or an OTLP push), one pass over the hosted
 * partitions per gauge; nothing on the request path.
 *
 * <p>Thread-safety: the callbacks run on the exporter's thread; {@link Source} must be safe there.
 */
public final class CapacityGauges {
    /** What the gauges read: every hosted partition's log dir, role and size. */
    @FunctionalInterface
    public interface Source {
        /** Calls {@code visitor} once per hosted partition. */
        void forEachPartition(PartitionVisitor visitor);
    }

    /** One hosted partition. */
    @FunctionalInterface
    public interface PartitionVisitor {
        /**
         * @param logDir the {@code log.dirs} entry holding the partition's directory
         * @param leader whether this broker leads it
         * @param segmentBytes bytes of its segment files
         */
        void partition(Path logDir, boolean leader, long segmentBytes);
    }

    private final List<Path> logDirs;
    private final List<Attributes> dirAttrs;
    private final Attributes node;
    private final Source source;
    private final ToLongFunction<Path> freeBytes;

    /**
     * Registers the four gauges on {@code callbacks}.
     *
     * @param logDirs the {@code log.dirs} entries, as the log manager holds them
     * @param freeBytes usable bytes of a dir's file system, negative when unreadable ({@link
     *     FileErrors#freeBytes} in production)
     */
    CapacityGauges(
            InstrumentCallbacks callbacks,
            int nodeId,
            List<Path> logDirs,
            Source source,
            ToLongFunction<Path> freeBytes) {
        this.logDirs = List.copyOf(logDirs);
        this.source = source;
        this.freeBytes = freeBytes;
        this.node = Attributes.of(BrokerMetrics.NODE_ID, (long) nodeId);
        List<Attributes> attrs = new ArrayList<>(logDirs.size());
        for (Path dir : this.logDirs) {
            attrs.add(Attributes.of(BrokerMetrics.NODE_ID, (long) nodeId, BrokerMetrics.LOG_DIR, dir.toString()));
        }
        this.dirAttrs = List.copyOf(attrs);
        callbacks.gauge(BrokerInstruments.LOG_DIR_FREE, this::free);
        callbacks.gauge(BrokerInstruments.LOG_DIR_USED, this::used);
        callbacks.gauge(BrokerInstruments.PARTITION_COUNT, m -> m.record(count(false), node));
        callbacks.gauge(BrokerInstruments.PARTITION_LEADER_COUNT, m -> m.record(count(true), node));
    }

    private void free(ObservableLongMeasurement m) {
        for (int i = 0; i < logDirs.size(); i++) {
            long free = freeBytes.applyAsLong(logDirs.get(i));
            if (free >= 0) {
                m.record(free, dirAttrs.get(i));
            }
        }
    }

    private void used(ObservableLongMeasurement m) {
        long[] used = new long[logDirs.size()];
        source.forEachPartition((dir, leader, bytes) -> {
            int i = logDirs.indexOf(dir);
            if (i >= 0) {
                used[i] += bytes;
            }
        });
        for (int i = 0; i < used.length; i++) {
            m.record(used[i], dirAttrs.get(i));
        }
    }

    private long count(boolean leadersOnly) {
        long[] n = new long[1];
        source.forEachPartition((dir, leader, bytes) -> {
            if (leader || !leadersOnly) {
                n[0]++;
            }
        });
        return n[0];
    }
}
