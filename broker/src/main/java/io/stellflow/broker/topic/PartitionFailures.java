package io.stellflow.broker.topic;

import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.telemetry.StorageMetrics;
import io.stellflow.storage.StorageErrors;
import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a writer does with a write of a partition that failed (the agent boundary of issue #23):
 * it marks the partition failed ({@link Partition#markFailed}) and logs the episode once, then the
 * caller answers its request(s) with an error and counts it ({@code stellflow.log.write.error.count});
 * later failures of the same partition log at DEBUG only, without a stack trace. A write refused
 * because the partition had already failed ({@link PartitionFailedException}) changes nothing.
 *
 * <p>The one event per episode: {@code DISK_FULL} when the file system is full (the log's storage
 * hook writes it, with file, dir and free space), otherwise {@code PARTITION_FAILED partition= dir=
 * file= freeBytes= operation= error= reason=} at ERROR, with the stack trace only for a throwable
 * that is not an {@link IOException} (a fault or a bug, worth its trace once).
 *
 * <p>Thread-safety: stateless; the partition's failure is set atomically, first caller wins.
 */
public final class PartitionFailures {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionFailures.class);

    private PartitionFailures() {}

    /**
     * Records that a write of {@code partition} failed with {@code cause}. Never throws.
     *
     * @param operation {@code append} (leader) or {@code follower-append}
     * @param nowMs the time of the failure, ms since the epoch
     * @return true when this failure started the episode (it was logged), false when the partition
     *     had already failed
     */
    public static boolean writeFailed(Partition partition, String operation, Throwable cause, long nowMs) {
        if (cause instanceof PartitionFailedException) {
            // A write refused because the partition had already failed: not a failure of its own (it
            // may even arrive after the partition recovered, which must not fail it again).
            LOG.debug("Write to failed partition {} refused: {}", partition, cause.getMessage());
            return false;
        }
        PartitionFailure failure = new PartitionFailure(
                operation,
                StorageErrors.fileOf(cause),
                StorageErrors.reasonOf(cause),
                cause.getClass().getName(),
                nowMs,
                StorageErrors.isNoSpace(cause));
        if (!partition.markFailed(failure)) {
            LOG.debug("Write to failed partition {} refused again: {}", partition, failure.reason());
            return false;
        }
        if (failure.noSpace()) {
            return true; // DISK_FULL (StorageMetrics.diskFull) already named the file, dir and free space
        }
        Path dir = partition.log().dir();
        Object[] args = {
            LogEvents.PARTITION_FAILED,
            partition,
            dir,
            failure.file(),
            StorageMetrics.freeBytes(dir),
            operation,
            failure.error(),
            failure.reason(),
            cause
        };
        String format = "{} partition={} dir={} file={} freeBytes={} operation={} error={} reason={}";
        if (cause instanceof IOException) {
            args[args.length - 1] = null; // an I/O error is explained by its reason: no trace
        }
        LOG.error(format, args);
        return true;
    }
}
