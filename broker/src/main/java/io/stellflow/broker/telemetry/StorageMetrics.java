package io.stellflow.broker.telemetry;

import io.stellflow.storage.LogMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage hooks ({@link LogMetrics}) of the broker's logs: durations and events go to the
 * broker's shared instruments (no topic or partition attribute); retention logs {@code
 * SEGMENT_DELETED} once per pass that removed segments. The load time of a log is recorded for every
 * open (at start, after an unclean stop with its recovery scan, and for a log created now); the log
 * manager names the partition in its own recovery line.
 *
 * <p>Thread-safety: called on the logs' writer or loading threads; holds no mutable state.
 */
public final class StorageMetrics implements LogMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(StorageMetrics.class);

    private final BrokerMetrics metrics;

    StorageMetrics(BrokerMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void append(long nanos, boolean leader) {
        metrics.append(nanos, leader);
    }

    @Override
    public void flush(long nanos) {
        metrics.flush(nanos);
    }

    @Override
    public void segmentRolled() {
        metrics.segmentRolled();
    }

    @Override
    public void logLoaded(long nanos, boolean clean) {
        metrics.logLoaded(nanos);
    }

    @Override
    public void indexRebuilt() {
        metrics.indexRebuilt();
    }

    @Override
    public void segmentsDeleted(int count) {
        metrics.segmentsDeleted(count);
        LOG.info("{} segments={}", LogEvents.SEGMENT_DELETED, count);
    }
}
