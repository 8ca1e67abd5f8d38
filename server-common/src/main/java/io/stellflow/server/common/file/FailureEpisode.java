package io.stellflow.server.common.file;

import java.io.IOException;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Objects;
import org.slf4j.Logger;

/**
 * The log lines of one periodic background task that writes files (a checkpoint writer, retention,
 * compaction): errors that inform, not flood (issue #23 point 4). Such a task runs again every
 * period, so on a full disk it fails every period until space is freed; its failures form an
 * episode, from the first failure to the next pass that succeeds:
 *
 * <ul>
 *   <li>the first failure: one WARN line {@code BACKGROUND_TASK_FAILED task= dir= file= freeBytes=
 *       error= reason=}, with the stack trace only when the cause is not an {@link IOException} (a
 *       fault or a bug, worth its trace once);
 *   <li>every later failure: counted by the caller's hook (a metric such as {@code
 *       stellflow.log.background.error.count}) and logged at DEBUG without a trace; at most once per
 *       {@value #SUMMARY_INTERVAL_MS} ms a WARN line {@code BACKGROUND_TASK_FAILING task= failures=
 *       seconds= reason=} says "failed N times in the last M s";
 *   <li>the first success afterwards: one INFO line {@code BACKGROUND_TASK_RECOVERED task=
 *       failures= downMs=} and the episode is over.
 * </ul>
 *
 * <p>A pass that visits several files (every log of a broker) reports each failure with {@link
 * #failed} and calls {@link #succeeded} only when the whole pass succeeded, so one episode covers
 * every file the task failed on.
 *
 * <p>Thread-safety: every method may be called from any thread (synchronized; called a few times
 * per task period, never on a hot path).
 */
public final class FailureEpisode {
    /** Event of the first failure of an episode. */
    public static final String FAILED_EVENT = "BACKGROUND_TASK_FAILED";

    /** Event of the periodic summary of an episode's later failures. */
    public static final String FAILING_EVENT = "BACKGROUND_TASK_FAILING";

    /** Event of the end of an episode. */
    public static final String RECOVERED_EVENT = "BACKGROUND_TASK_RECOVERED";

    /** At most one summary line per 5 minutes per task (issue #23: "summarised, not flooded"). */
    public static final long SUMMARY_INTERVAL_MS = 300_000;

    /** Counts one failure after the first of an episode. */
    @FunctionalInterface
    public interface RepeatCounter {
        void failedAgain(String task);
    }

    private final String task;
    private final Logger log;
    private final InstantSource clock;
    private final RepeatCounter counter;

    /** Failures of the current episode; 0 between episodes. */
    private long failures;

    private long startedAtMs;
    /** Time of the last WARN line of this episode (the first failure or the last summary). */
    private long lastLineAtMs;
    /** Failures since that line. */
    private long failuresSinceLine;

    private String lastReason;

    /**
     * @param task the task's name in every line and in the metric's {@code task} attribute (for
     *     example {@code checkpoint}, {@code retention})
     * @param log where the lines go (the task owner's logger)
     * @param clock wall clock for the summary interval and the episode's length
     * @param counter counts every failure after the first of an episode
     */
    public FailureEpisode(String task, Logger log, InstantSource clock, RepeatCounter counter) {
        this.task = Objects.requireNonNull(task, "task");
        this.log = Objects.requireNonNull(log, "log");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.counter = Objects.requireNonNull(counter, "counter");
    }

    /** The task's name. */
    public String task() {
        return task;
    }

    /**
     * Reports that the task failed on {@code dir} with {@code cause}. Never throws.
     *
     * @param dir the directory the task wrote in (named with its free space in the first line)
     * @param file the file it wrote, when the caller knows it and {@code cause} does not name one
     *     ({@link FileErrors#fileOf}); may be null
     * @return true when this failure started an episode (it was logged at WARN)
     */
    public synchronized boolean failed(Path dir, Path file, Throwable cause) {
        long nowMs = clock.millis();
        lastReason = FileErrors.reasonOf(cause);
        if (failures++ == 0) {
            startedAtMs = nowMs;
            lastLineAtMs = nowMs;
            failuresSinceLine = 0;
            String named = FileErrors.fileOf(cause);
            Object[] args = {
                FAILED_EVENT,
                task,
                dir,
                named != null ? named : file,
                FileErrors.freeBytes(dir),
                cause.getClass().getName(),
                lastReason,
                cause instanceof IOException ? null : cause // an I/O error is explained by its reason
            };
            log.warn("{} task={} dir={} file={} freeBytes={} error={} reason={}", args);
            return true;
        }
        counter.failedAgain(task);
        failuresSinceLine++;
        if (log.isDebugEnabled()) {
            log.debug("Background task {} failed again on {}: {}", task, dir, cause.toString());
        }
        if (nowMs - lastLineAtMs >= SUMMARY_INTERVAL_MS) {
            log.warn(
                    "{} task={} failures={} seconds={} reason={}: {} failed {} times in the last {} s",
                    FAILING_EVENT,
                    task,
                    failuresSinceLine,
                    (nowMs - lastLineAtMs) / 1000,
                    lastReason,
                    task,
                    failuresSinceLine,
                    (nowMs - lastLineAtMs) / 1000);
            lastLineAtMs = nowMs;
            failuresSinceLine = 0;
        }
        return false;
    }

    /**
     * Reports a pass of the task that succeeded everywhere.
     *
     * @return true when it ended an episode (logged at INFO)
     */
    public synchronized boolean succeeded() {
        if (failures == 0) {
            return false;
        }
        log.info(
                "{} task={} failures={} downMs={} lastReason={}",
                RECOVERED_EVENT,
                task,
                failures,
                Math.max(0, clock.millis() - startedAtMs),
                lastReason);
        failures = 0;
        return true;
    }

    /** Failures of the current episode (0 when the task is not failing). */
    public synchronized long failures() {
        return failures;
    }
}
