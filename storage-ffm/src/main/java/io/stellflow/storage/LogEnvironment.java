package io.stellflow.storage;

import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What a log needs from its surroundings, injectable so tests drive time: a wall clock (ms, for
 * segment append times, rolls and time retention), a monotonic clock (ns, for the {@code flush.ms}
 * policy and the append, flush and load latencies), a scheduler for delayed file deletion ({@code
 * file.delete.delay.ms}) and periodic work, and the metrics hooks.
 *
 * <p>Thread-safety: immutable; the clocks and scheduler must be safe to call from any thread.
 *
 * @param clock wall-clock time source
 * @param scheduler runs a task once after a delay
 * @param metrics storage metric hooks ({@link LogMetrics#NOOP} for none)
 * @param nanoClock monotonic time in ns, as {@link System#nanoTime()} (only differences count);
 *     read on the append path, so it must not allocate
 * @param producerState idempotent-producer settings ({@link ProducerStateConfig#DEFAULTS} unless given)
 * @param producerIds the count of producer ids over every log opened with this environment and its
 *     bound, {@code producer.id.max.per.broker} ({@link BrokerProducerIds}): one per broker, shared by
 *     the copies the {@code with...} methods make; {@link #withProducerState} starts a new one
 */
public record LogEnvironment(
        InstantSource clock,
        Scheduler scheduler,
        LogMetrics metrics,
        LongSupplier nanoClock,
        ProducerStateConfig producerState,
        BrokerProducerIds producerIds) {

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
        Objects.requireNonNull(nanoClock, "nanoClock");
        Objects.requireNonNull(producerState, "producerState");
        Objects.requireNonNull(producerIds, "producerIds");
    }

    /** With a new producer-id count bounded by {@code producerState}'s {@code producer.id.max.per.broker}. */
    public LogEnvironment(
            InstantSource clock,
            Scheduler scheduler,
            LogMetrics metrics,
            LongSupplier nanoClock,
            ProducerStateConfig producerState) {
        this(
                clock,
                scheduler,
                metrics,
                nanoClock,
                producerState,
                new BrokerProducerIds(producerState.maxProducerIdsPerBroker()));
    }

    /** With the default producer-state settings. */
    public LogEnvironment(InstantSource clock, Scheduler scheduler, LogMetrics metrics, LongSupplier nanoClock) {
        this(clock, scheduler, metrics, nanoClock, ProducerStateConfig.DEFAULTS);
    }

    /** With {@link System#nanoTime()} as the monotonic clock. */
    public LogEnvironment(InstantSource clock, Scheduler scheduler, LogMetrics metrics) {
        this(clock, scheduler, metrics, System::nanoTime);
    }

    /** Without metrics, with {@link System#nanoTime()} as the monotonic clock. */
    public LogEnvironment(InstantSource clock, Scheduler scheduler) {
        this(clock, scheduler, LogMetrics.NOOP);
    }

    /** This environment with {@code newMetrics} as the metric hooks. */
    public LogEnvironment withMetrics(LogMetrics newMetrics) {
        return new LogEnvironment(clock, scheduler, newMetrics, nanoClock, producerState, producerIds);
    }

    /** This environment with {@code newNanoClock} as the monotonic clock (tests drive {@code flush.ms}). */
    public LogEnvironment withNanoClock(LongSupplier newNanoClock) {
        return new LogEnvironment(clock, scheduler, metrics, newNanoClock, producerState, producerIds);
    }

    /**
     * This environment with {@code newProducerState} as the idempotent-producer settings and a new
     * producer-id count under its {@code producer.id.max.per.broker} (call it before opening logs).
     */
    public LogEnvironment withProducerState(ProducerStateConfig newProducerState) {
        return new LogEnvironment(clock, scheduler, metrics, nanoClock, newProducerState);
    }

    /** The system clock and a shared daemon deletion thread. */
    public static LogEnvironment system() {
        return SYSTEM;
    }

    long nowMs() {
        return clock.millis();
    }

    long nowNs() {
        return nanoClock.getAsLong();
    }
}
