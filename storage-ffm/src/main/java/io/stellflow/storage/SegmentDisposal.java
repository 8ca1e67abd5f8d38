package io.stellflow.storage;

import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to a segment after it leaves a {@link UnifiedLog}: its files are renamed to {@code
 * .deleted} at once (retention, truncation) and removed {@link LogConfig#fileDeleteDelayMs()} later, or,
 * for a segment whose files a compaction swap replaced, only closed after that delay. The delay lets
 * readers that picked the segment before it left finish with their open channel.
 *
 * <p>Thread-safety: stateless apart from the scheduler; callable from any thread. Failures of the
 * delayed step are logged (WARN) and never thrown: the files are already out of the log.
 */
final class SegmentDisposal {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentDisposal.class);

    private SegmentDisposal() {}

    /** Renames {@code s}'s files to {@code .deleted} now and deletes them after {@code delayMs}. */
    static void delete(LogEnvironment.Scheduler scheduler, LogSegment s, long delayMs) throws IOException {
        s.renameForDeletion();
        deleteRenamed(scheduler, s, delayMs);
    }

    /** Deletes the already renamed files of {@code s} after {@code delayMs}. */
    static void deleteRenamed(LogEnvironment.Scheduler scheduler, LogSegment s, long delayMs) {
        scheduler.schedule(
                () -> {
                    try {
                        s.deleteRenamed();
                    } catch (IOException e) {
                        LOG.warn("Could not delete the files of {}", s, e);
                    }
                },
                delayMs);
    }

    /** Closes {@code s} after {@code delayMs} without deleting anything (its files were replaced). */
    static void abandon(LogEnvironment.Scheduler scheduler, LogSegment s, long delayMs) {
        scheduler.schedule(
                () -> {
                    try {
                        s.abandon();
                    } catch (IOException e) {
                        LOG.warn("Could not close the replaced {}", s, e);
                    }
                },
                delayMs);
    }
}
