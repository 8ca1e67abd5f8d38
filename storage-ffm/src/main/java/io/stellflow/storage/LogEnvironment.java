package io.stellflow.storage;

import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What a log needs from its surroundings, injectable so tests drive time: a wall clock (ms, for
 * segment append times, rolls and time retention), a scheduler for delayed file deletion ({@code
 * file.delete.delay.ms}) and periodic work, and the metrics hooks.
 *
 * <p>Thread-safety: immutable; the clock and scheduler must be safe to call from any thread.
 *
 * @param clock wall-clock time source
 * @param scheduler runs a task once after a delay
 * @param metrics storage metric hooks ({@link LogMetrics#NOOP} for none)
 */
public record LogEnvironment(InstantSource clock, Scheduler scheduler, LogMetrics metrics) {

    /** Runs a task once after {@code delayMs} milliseconds on some thread. */
    @FunctionalInterface
    public interface Scheduler {
        void schedule(Runnable task, long delayMs);
    }

    private static final class SystemScheduler {
        /** One daemon thread: deletions are rare and short. */
        static final ScheduledExecutorService EXECUTOR = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "stellflow-log-deleter");
            t.setDaemon(true);
            return t;
        });
    }

    private static final LogEnvironment SYSTEM = new LogEnvironment(
            InstantSource.system(),
            (task, delayMs) -> SystemScheduler.EXECUTOR.schedule(task, delayMs, TimeUnit.MILLISECONDS));

    public LogEnvironment {
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(metrics, "metrics");
    }

    /** Without metrics. */
    public LogEnvironment(InstantSource clock, Scheduler scheduler) {
        this(clock, scheduler, LogMetrics.NOOP);
    }

    /** This environment with {@code newMetrics} as the metric hooks. */
    public LogEnvironment withMetrics(LogMetrics newMetrics) {
        return new LogEnvironment(clock, scheduler, newMetrics);
    }

    /** The system clock and a shared daemon deletion thread. */
    public static LogEnvironment system() {
        return SYSTEM;
    }

    long nowMs() {
        return clock.millis();
    }
}
