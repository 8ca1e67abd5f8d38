package io.stellflow.broker.watchdog;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.telemetry.LogEvents;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the broker's long-lived worker threads (issue #23: an append agent that died left its
 * partitions' Produces unanswered while the broker kept serving everything else). Each watched thread
 * has a {@link Heartbeat}; every {@value #CHECK_INTERVAL_MS} ms ({@link #checkNow}) the watchdog puts
 * each in one of three states:
 *
 * <ul>
 *   <li>STOPPED: its thread ended while its owner is not closed. One ERROR {@code THREAD_STOPPED
 *       thread= owner= lastBeatMsAgo=}, then {@link Owner#restart}: the owner starts a new thread on
 *       the same work ({@code stellflow.thread.restart.count}). An owner that cannot restart keeps
 *       the broker fenced ({@link #fenceWanted}) and is asked again at every check.
 *   <li>STUCK: alive, but its last beat is older than {@code broker.thread.stall.timeout.ms}. One
 *       ERROR {@code THREAD_STUCK thread= owner= stalledMs=} with the thread's stack, {@link
 *       Owner#stuck}{@code (true)} (an append agent refuses new appends) and {@link #fenceWanted}
 *       (the broker's controller heartbeats ask to be fenced, so leadership moves away) until it
 *       beats again: then INFO {@code THREAD_RESUMED thread= owner= stalledMs=} and {@code
 *       stuck(false)}.
 *   <li>RUNNING otherwise.
 * </ul>
 *
 * <p>Registering is one call: a thread with a loop of its own creates a {@link Heartbeat}, beats it
 * once per iteration and {@link #watch}es it with an {@link Owner}; a single-thread executor is
 * watched by {@link #watchExecutor}, which beats through a probe task submitted at every check (no
 * change to the executor's tasks). An owner that closes is dropped at the next check; its thread
 * ending then is not a stop.
 *
 * <p>Metrics ({@link BrokerMetrics.ThreadSource}): per watched thread alive (1/0) and heartbeat age
 * (ms), and the restart and stuck counts.
 *
 * <p>Thread-safety: {@link #watch}, {@link #watchExecutor} and the metric reads from any thread;
 * {@link #checkNow} runs on the watchdog thread ({@code sf-watchdog}) or a test's, one at a time.
 */
public final class ThreadWatchdog implements BrokerMetrics.ThreadSource, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ThreadWatchdog.class);

    /**
     * How often the watchdog checks, ms. The smallest stall timeout is 1000 ms, so a stuck thread is
     * reported at most 2 s after its last beat; a check costs one clock read per watched thread.
     */
    public static final long CHECK_INTERVAL_MS = 1_000;

    /** What the watchdog may ask of a watched thread's owner; called on the watchdog thread. */
    public interface Owner {
        /** Whether the owner was closed (its thread ends on purpose): the watchdog drops the thread. */
        boolean closed();

        /**
         * The thread ended while the owner is open: start a new one that continues the same work and
         * {@link Heartbeat#attach attach} it. Returns false when it cannot (the broker stays fenced;
         * asked again at the next check).
         */
        boolean restart();

        /** The thread is stuck ({@code true}: refuse new work it would not answer) or moves again. */
        default void stuck(boolean stuck) {}
    }

    private enum State {
        RUNNING,
        STUCK,
        STOPPED
    }

    private static final class Watch {
        final Heartbeat heartbeat;
        final Owner owner;
        final long stallTimeoutNs;
        /** Called before each check's reading, or null. */
        final Runnable probe;
        /** Watchdog thread only. */
        State state = State.RUNNING;
        /** The last beat before the thread became STUCK, ns; watchdog thread only. */
        long stalledFromNs;

        Watch(Heartbeat heartbeat, Owner owner, long stallTimeoutNs, Runnable probe) {
            this.heartbeat = heartbeat;
            this.owner = owner;
            this.stallTimeoutNs = stallTimeoutNs;
            this.probe = probe;
        }
    }

    private final long stallTimeoutNs;
    private final LongSupplier nanoClock;
    private final CopyOnWriteArrayList<Watch> watches = new CopyOnWriteArrayList<>();
    private volatile long restarts;
    private volatile long stucks;
    private volatile boolean fenceWanted;
    private ScheduledExecutorService thread;
    private boolean closed;

    /**
     * @param stallTimeoutMs {@code broker.thread.stall.timeout.ms}
     * @param nanoClock the clock of every watched {@link Heartbeat} ({@link System#nanoTime} outside
     *     tests)
     */
    public ThreadWatchdog(long stallTimeoutMs, LongSupplier nanoClock) {
        if (stallTimeoutMs < 1) {
            throw new IllegalArgumentException("stall timeout must be >= 1 ms: " + stallTimeoutMs);
        }
        this.stallTimeoutNs = TimeUnit.MILLISECONDS.toNanos(stallTimeoutMs);
        this.nanoClock = nanoClock;
    }

    /** Starts checking every {@value #CHECK_INTERVAL_MS} ms on a daemon thread {@code sf-watchdog}. */
    public synchronized void start() {
        if (thread != null || closed) {
            return;
        }
        thread = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sf-watchdog", true));
        thread.scheduleWithFixedDelay(this::checkQuietly, CHECK_INTERVAL_MS, CHECK_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    /** A new heartbeat on this watchdog's clock. */
    public Heartbeat heartbeat(String threadName, String owner) {
        return new Heartbeat(threadName, owner, nanoClock);
    }

    /** Watches {@code heartbeat}'s thread with the broker's stall timeout. */
    public void watch(Heartbeat heartbeat, Owner owner) {
        watches.add(new Watch(heartbeat, owner, stallTimeoutNs, null));
    }

    /**
     * Watches {@code heartbeat}'s thread for STOPPED only: for a thread that legitimately waits longer
     * than the stall timeout (the controller heartbeat thread, whose interval may be 60 s).
     */
    public void watchLiveness(Heartbeat heartbeat, Owner owner) {
        watches.add(new Watch(heartbeat, owner, Long.MAX_VALUE, null));
    }

    /**
     * Watches the one thread of {@code executor} (a single-thread executor, or a timer): at every
     * check a probe task is submitted that beats the heartbeat and attaches the thread it runs on, so
     * a task that blocks the executor for longer than the stall timeout (plus the check interval, as
     * its heartbeat is up to one interval old between probes) makes it STUCK. A STOPPED
     * executor thread is restarted by the executor itself on the next probe when {@code
     * replacesDeadThreads} ({@link java.util.concurrent.ThreadPoolExecutor} does); otherwise the
     * broker stays fenced.
     *
     * @param closed whether the executor's owner was closed (a rejected probe is then expected)
     * @return the heartbeat (tests)
     */
    public Heartbeat watchExecutor(
            String threadName, String owner, Executor executor, boolean replacesDeadThreads, BooleanSupplier closed) {
        Heartbeat heartbeat = heartbeat(threadName, owner);
        Runnable beat = () -> heartbeat.attach(Thread.currentThread());
        Runnable probe = () -> {
            try {
                executor.execute(beat);
            } catch (RejectedExecutionException | IllegalStateException e) {
                // shut down (a stopped timer throws IllegalStateException): its owner is
                // closing, and the next check drops it
            }
        };
        Owner o = new Owner() {
            @Override
            public boolean closed() {
                return closed.getAsBoolean();
            }

            @Override
            public boolean restart() {
                return replacesDeadThreads;
            }
        };
        // A probe beats once per check, so a healthy executor's beat is up to one interval old at
        // the next check: it is stuck only once its probe waited the whole stall timeout.
        watches.add(new Watch(heartbeat, o, stallTimeoutNs + TimeUnit.MILLISECONDS.toNanos(CHECK_INTERVAL_MS), probe));
        return heartbeat;
    }

    /** Stops watching {@code heartbeat} (its owner closed; also noticed at the next check). */
    public void unwatch(Heartbeat heartbeat) {
        watches.removeIf(w -> w.heartbeat == heartbeat);
    }

    /**
     * One check of every watched thread (see the class comment); then the probes of the watched
     * executors, whose beats the next check reads.
     */
    public synchronized void checkNow() {
        long nowNs = nanoClock.getAsLong();
        boolean fence = false;
        for (Watch w : watches) {
            if (w.owner.closed()) {
                watches.remove(w);
                continue;
            }
            check(w, nowNs);
            fence |= w.state != State.RUNNING;
        }
        fenceWanted = fence;
        for (Watch w : watches) {
            if (w.probe != null) {
                w.probe.run();
            }
        }
    }

    private void check(Watch w, long nowNs) {
        Heartbeat hb = w.heartbeat;
        long ageNs = nowNs - hb.lastBeatNs();
        if (!hb.alive()) {
            if (w.state != State.STOPPED) {
                LOG.error(
                        "{} thread={} owner={} lastBeatMsAgo={}",
                        LogEvents.THREAD_STOPPED,
                        hb.thread(),
                        hb.owner(),
                        TimeUnit.NANOSECONDS.toMillis(ageNs));
                if (w.state == State.STUCK) {
                    w.owner.stuck(false); // the stuck thread is gone; a new one starts fresh
                }
                w.state = State.STOPPED;
            }
            if (restart(w)) {
                restarts++;
                w.state = State.RUNNING;
            }
            return;
        }
        if (ageNs > w.stallTimeoutNs) {
            if (w.state != State.STUCK) {
                w.state = State.STUCK;
                w.stalledFromNs = hb.lastBeatNs();
                stucks++;
                LOG.error(
                        "{} thread={} owner={} stalledMs={}",
                        LogEvents.THREAD_STUCK,
                        hb.thread(),
                        hb.owner(),
                        TimeUnit.NANOSECONDS.toMillis(ageNs),
                        new StackOf(hb.worker()));
                w.owner.stuck(true);
            }
        } else if (w.state == State.STUCK) {
            w.state = State.RUNNING;
            LOG.info(
                    "{} thread={} owner={} stalledMs={}",
                    LogEvents.THREAD_RESUMED,
                    hb.thread(),
                    hb.owner(),
                    TimeUnit.NANOSECONDS.toMillis(hb.lastBeatNs() - w.stalledFromNs));
            w.owner.stuck(false);
        } else {
            w.state = State.RUNNING;
        }
    }

    private static boolean restart(Watch w) {
        try {
            return w.owner.restart();
        } catch (RuntimeException | OutOfMemoryError e) {
            LOG.error(
                    "Restarting {} of {} failed; the broker stays fenced",
                    w.heartbeat.thread(),
                    w.heartbeat.owner(),
                    e);
            return false;
        }
    }

    private void checkQuietly() {
        try {
            checkNow();
        } catch (Throwable e) {
            // A scheduled task that throws is never run again: the watchdog must outlive its bugs.
            LOG.error("Thread watchdog check failed", e);
        }
    }

    /**
     * Whether a watched thread is STUCK, or STOPPED and not restarted: the broker asks the controller
     * to fence it while this is true. Any thread.
     */
    public boolean fenceWanted() {
        return fenceWanted;
    }

    @Override
    public long restarts() {
        return restarts;
    }

    @Override
    public long stucks() {
        return stucks;
    }

    @Override
    public void forEachThread(BrokerMetrics.ThreadVisitor visitor) {
        long nowNs = nanoClock.getAsLong();
        for (Watch w : watches) {
            Heartbeat hb = w.heartbeat;
            visitor.thread(
                    hb.thread(), hb.alive(), Math.max(0, TimeUnit.NANOSECONDS.toMillis(nowNs - hb.lastBeatNs())));
        }
    }

    /** Carries another thread's stack into the THREAD_STUCK line (a log pipeline keeps it with the event). */
    private static final class StackOf extends Throwable {
        private static final long serialVersionUID = 1L;

        StackOf(Thread t) {
            super(
                    t == null ? "no thread attached yet" : "stack of " + t.getName() + " (" + t.getState() + ")",
                    null,
                    false,
                    true);
            if (t != null) {
                setStackTrace(t.getStackTrace());
            }
        }
    }

    /** Stops the watchdog thread (the watched threads are their owners'). Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        if (thread != null) {
            thread.shutdownNow();
        }
    }
}
