package io.stellflow.broker.telemetry;

import io.stellflow.server.common.file.FileErrors;
import io.stellflow.storage.LogMetrics;
import io.stellflow.storage.Quarantined;
import io.stellflow.storage.StorageErrors;
import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage hooks ({@link LogMetrics}) of the broker's logs: durations and events go to the
 * broker's shared instruments (no topic or partition attribute); retention logs {@code
 * SEGMENT_DELETED} once per pass that removed segments. The load time of a log is recorded for every
 * open (at start, after an unclean stop with its recovery scan, and for a log created now).
 *
 * <p>Lifecycle lines, one per event, never per record: {@code LOG_RECOVERED partition=<topic>-<n>
 * dir=... segmentsRecovered= droppedBytes= segmentsQuarantined= logEndOffset=} when a log without its
 * clean shutdown marker was recovered (INFO, WARN when bytes were removed); {@code
 * SEGMENT_QUARANTINED partition= dir= file= position= reason= quarantineDir= segments= bytes= files=}
 * (ERROR) when opening a log moved corrupt data to quarantine (also counted in {@code
 * stellflow.log.quarantine.segment.count} and {@code stellflow.log.quarantine.bytes}); {@code DISK_FULL
 * partition= dir= file= freeBytes= operation=append|flush|checkpoint error=...} (ERROR) when a write failed because
 * the file system is full, once per full episode of a log. The failed write is an error for its
 * caller (a Produce is answered {@code BROKER_NOT_AVAILABLE}, nothing is acknowledged).
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

    @Override
    public void logRecovered(
            Path dir, int segmentsRecovered, long droppedBytes, int segmentsQuarantined, long logEndOffset) {
        String format =
                "{} partition={} dir={} segmentsRecovered={} droppedBytes={} segmentsQuarantined={} logEndOffset={}";
        Object[] args = {
            LogEvents.LOG_RECOVERED,
            dir.getFileName(),
            dir,
            segmentsRecovered,
            droppedBytes,
            segmentsQuarantined,
            logEndOffset
        };
        if (droppedBytes > 0) {
            LOG.warn(format, args);
        } else {
            LOG.info(format, args);
        }
    }

    @Override
    public void logQuarantined(Quarantined q) {
        metrics.quarantined(q.segments(), q.bytes());
        LOG.error(
                "{} partition={} dir={} file={} position={} reason={} quarantineDir={} segments={} bytes={} files={}",
                LogEvents.SEGMENT_QUARANTINED,
                q.partitionDir().getFileName(),
                q.partitionDir(),
                q.file().getFileName(),
                q.position(),
                q.reason(),
                q.quarantineDir(),
                q.segments(),
                q.bytes(),
                String.join(",", q.files()));
    }

    @Override
    public void diskFull(Path dir, String operation, IOException cause) {
        LOG.error(
                "{} partition={} dir={} file={} freeBytes={} operation={} error={}",
                LogEvents.DISK_FULL,
                dir.getFileName(),
                dir,
                StorageErrors.fileOf(cause),
                freeBytes(dir),
                operation,
                StorageErrors.reasonOf(cause));
    }

    @Override
    public void backgroundTaskFailedAgain(String task) {
        metrics.backgroundTaskFailedAgain(task);
    }

    /** Usable bytes of the file system holding {@code dir}, -1 when that cannot be read. */
    public static long freeBytes(Path dir) {
        return FileErrors.freeBytes(dir);
    }
}
