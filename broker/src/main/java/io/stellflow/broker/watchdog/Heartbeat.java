package io.stellflow.broker.watchdog;

import java.util.function.LongSupplier;

/**
 * The liveness of one watched thread: the time of its last loop iteration on a nano clock ({@link
 * #beat}), and the thread that does the work now ({@link #attach}). The thread beats once per loop
 * iteration, or a probe task on its executor beats for it ({@link ThreadWatchdog#watchExecutor}); the
 * {@link ThreadWatchdog} reads both once a second.
 *
 * <p>Cost of {@link #beat}: one clock read and one volatile store; no allocation, no lock, no
 * logging, so it may sit in a hot loop (the append agent's).
 *
 * <p>Thread-safety: {@link #beat} and {@link #attach} from the watched thread (or whoever starts
 * it); every read from any thread.
 */
public final class Heartbeat {
    private final String thread;
    private final String owner;
    private final LongSupplier nanoClock;
    private volatile long lastBeatNs;
    private volatile Thread worker;

    /**
     * @param thread the watched thread's name ({@code thread=} in the events, the {@code thread}
     *     attribute of the metrics)
     * @param owner the component whose work it does ({@code owner=} in the events), e.g. {@code
     *     AppendService}
     * @param nanoClock a {@link System#nanoTime}-style clock (ns, compared by difference); the
     *     watchdog's clock must be the same
     */
    public Heartbeat(String thread, String owner, LongSupplier nanoClock) {
        this.thread = thread;
        this.owner = owner;
        this.nanoClock = nanoClock;
        this.lastBeatNs = nanoClock.getAsLong();
    }

    /** The watched thread made progress now: one volatile store of the clock. */
    public void beat() {
        lastBeatNs = nanoClock.getAsLong();
    }

    /**
     * {@code t} does this heartbeat's work from now on (a thread about to start, a restarted one, or
     * the executor thread a probe ran on), and counts as having beaten now.
     */
    public void attach(Thread t) {
        worker = t;
        beat();
    }

    /** The watched thread's name. */
    public String thread() {
        return thread;
    }

    /** The component whose work the thread does. */
    public String owner() {
        return owner;
    }

    /** {@link #beat}'s last clock reading, ns. */
    public long lastBeatNs() {
        return lastBeatNs;
    }

    /**
     * Whether the attached thread has not ended: true before any thread is attached, and for one
     * attached but not started yet.
     */
    public boolean alive() {
        Thread t = worker;
        return t == null || t.getState() != Thread.State.TERMINATED;
    }

    /** The attached thread, or null before one was attached. */
    Thread worker() {
        return worker;
    }
}
