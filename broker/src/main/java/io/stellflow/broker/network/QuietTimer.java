package io.stellflow.broker.network;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's timer for parked requests (long-poll Fetches, acks=-1 Produces, marker retries): one
 * thread that sleeps until the earliest pending deadline, and indefinitely while nothing is
 * pending. Netty's {@code HashedWheelTimer} wakes every tick whether or not anything is due; on this
 * lab's VMs a wake-up costs about 0.1 ms of CPU, so its 10 ms ticks were 1.2% of a core on an idle
 * broker and about a tenth of the broker's CPU in a compressed produce case (issue #21 profile,
 * 2026-12-06).
 *
 * <p>Deadlines are rounded up to a multiple of {@code tickMs} (the timer's precision: a timeout
 * fires at most one tick late, never early), so timeouts due close together share one wake-up: the
 * thread wakes at most once per tick for deadlines, plus once to take a timeout due earlier than
 * everything pending, plus once per {@value #SWEEP_CANCELLED} cancellations.
 *
 * <p>Scheduling from any thread is a lock-free queue offer; it wakes the timer thread only when the
 * new deadline is earlier than the one the thread sleeps until. Cancelling is a state change; the
 * thread drops cancelled timeouts when they come due, and sweeps them out earlier once they are
 * {@value #SWEEP_CANCELLED} or more and at least half of what is pending (so long timeouts cancelled
 * at a high rate, as acks=-1 Produces' 30 s ones, do not pile up).
 *
 * <p>Thread-safety: {@link #newTimeout} and {@link Timeout#cancel} from any thread; tasks run on the
 * timer's thread, one at a time, in deadline order (ties in any order). A task that throws is logged
 * and the timer goes on; an interrupt of the thread is cleared and logged. {@link
 * TimerTask#cancelled} is called on the timer's thread when it drops a cancelled timeout (by its
 * deadline at the latest). {@link #stop} (from any thread but the timer's, once) interrupts a task
 * still running, as {@code HashedWheelTimer} does, and cancels and returns what is left; after it
 * {@link #newTimeout} throws {@link IllegalStateException}.
 */
public final class QuietTimer implements Timer {
    private static final Logger LOG = LoggerFactory.getLogger(QuietTimer.class);

    /** Cancelled timeouts pending before the thread sweeps them out (when also half the pending). */
    static final int SWEEP_CANCELLED = 1024;

    private static final long PARKED_INDEFINITELY = Long.MAX_VALUE;
    /** Longest delay taken (about 146 years): deadlines stay comparable by subtraction. */
    private static final long MAX_DELAY_NANOS = 1L << 62;

    private final long tickNanos;
    private final Runnable beforeParkForTests;
    private final Thread thread;
    private final MpscUnboundedXaddArrayQueue<Entry> added = new MpscUnboundedXaddArrayQueue<>(256);
    /** Owned by the timer thread: pending timeouts by deadline. */
    private final PriorityQueue<Entry> pending = new PriorityQueue<>();

    private final AtomicInteger cancelled = new AtomicInteger();
    /** The deadline (clock ns) the thread sleeps until, {@link #PARKED_INDEFINITELY}, or MIN while awake. */
    private volatile long parkedUntilNanos = Long.MIN_VALUE;

    private volatile boolean stopped;
    private final AtomicBoolean stopCalled = new AtomicBoolean();
    /** Passes of the thread's loop: each is one wake-up (tests). */
    private volatile long wakeUps;
    /** Timeouts left when the thread ended (set by the thread before it ends). */
    private volatile List<Entry> leftAtStop = List.of();

    /**
     * Starts the timer's thread.
     *
     * @param threadFactory makes the timer's thread (name, daemon)
     * @param tickMs precision, ms (> 0): deadlines are rounded up to a multiple of it
     */
    public QuietTimer(ThreadFactory threadFactory, long tickMs) {
        this(threadFactory, tickMs, () -> {});
    }

    /** As above; {@code beforeParkForTests} runs on the thread after its last look, before it parks. */
    QuietTimer(ThreadFactory threadFactory, long tickMs, Runnable beforeParkForTests) {
        if (tickMs <= 0) {
            throw new IllegalArgumentException("tickMs must be > 0: " + tickMs);
        }
        this.tickNanos = TimeUnit.MILLISECONDS.toNanos(tickMs);
        this.beforeParkForTests = beforeParkForTests;
        this.thread = threadFactory.newThread(this::run);
        thread.start();
    }

    /**
     * Runs {@code task} on the timer's thread once {@code delay} has passed (rounded up to the tick),
     * unless cancelled first.
     *
     * @param delay how long from now; negative counts as 0, more than about 146 years as that
     * @throws IllegalStateException after {@link #stop}
     */
    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        if (stopped) {
            throw new IllegalStateException("timer stopped; cannot take " + task);
        }
        long due = System.nanoTime() + Math.min(MAX_DELAY_NANOS, Math.max(0, unit.toNanos(delay)));
        Entry e = new Entry(task, roundUp(due));
        added.offer(e);
        // The thread publishes what it sleeps until before its last look at `added` (see run), so
        // either it sees this entry or this sees its deadline. While it is awake it looks again.
        long parkedUntil = parkedUntilNanos;
        if (parkedUntil == PARKED_INDEFINITELY
                || (parkedUntil != Long.MIN_VALUE && e.deadlineNanos - parkedUntil < 0)) {
            LockSupport.unpark(thread);
        }
        if (stopped && e.cancel()) {
            throw new IllegalStateException("timer stopped; cannot take " + task); // raced with stop()
        }
        return e;
    }

    /**
     * Stops the thread (interrupting, every 100 ms, a task that is still running) and returns the
     * timeouts that neither ran nor were cancelled, now cancelled: the caller owns them. A second
     * call returns an empty set.
     *
     * @throws IllegalStateException when called from a task (the timer's own thread)
     */
    @Override
    public Set<Timeout> stop() {
        if (Thread.currentThread() == thread) {
            throw new IllegalStateException("stop() called from a task of " + thread.getName());
        }
        if (!stopCalled.compareAndSet(false, true)) {
            return Set.of();
        }
        stopped = true;
        LockSupport.unpark(thread);
        boolean interrupted = false;
        while (thread.isAlive()) {
            thread.interrupt();
            try {
                thread.join(100);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Set<Timeout> left = new HashSet<>();
        for (Entry e : leftAtStop) {
            takeOver(e, left);
        }
        leftAtStop = List.of();
        for (Entry e = added.poll(); e != null; e = added.poll()) {
            takeOver(e, left); // offered after the thread's last drain
        }
        return left;
    }

    /** Cancels {@code e} for stop()'s caller and adds it to {@code left} unless it ran or was cancelled. */
    private static void takeOver(Entry e, Set<Timeout> left) {
        if (e.casState(Entry.WAITING, Entry.CANCELLED)) {
            left.add(e);
        }
    }

    /** Timeouts the thread holds, cancelled ones not yet dropped included (tests). */
    int pendingForTests() {
        return pending.size() + added.size();
    }

    /** The thread's state and where it is (tests' failure messages). */
    String threadStateForTests() {
        StackTraceElement[] at = thread.getStackTrace();
        return thread.getState()
                + (at.length > 0 ? " at " + Arrays.toString(Arrays.copyOf(at, Math.min(6, at.length))) : "");
    }

    /** How often the thread woke up so far (tests: it sleeps while nothing is pending). */
    long wakeUpsForTests() {
        return wakeUps;
    }

    private long roundUp(long nanos) {
        long r = Math.floorMod(nanos, tickNanos);
        return r == 0 ? nanos : nanos + (tickNanos - r);
    }

    private void run() {
        try {
            loop();
        } finally {
            // Also when the loop died of an Error: stop() returns what is left.
            parkedUntilNanos = Long.MIN_VALUE;
            for (Entry e = added.poll(); e != null; e = added.poll()) {
                pending.add(e);
            }
            leftAtStop = new ArrayList<>(pending);
            pending.clear();
        }
    }

    private void loop() {
        boolean interruptLogged = false;
        while (!stopped) {
            wakeUps++; // only this thread writes it
            parkedUntilNanos = Long.MIN_VALUE;
            drainAdded();
            fireDue(System.nanoTime());
            sweepCancelled();
            // park returns at once while the interrupt flag is set: clear it (a task set it).
            if (Thread.interrupted() && !stopped && !interruptLogged) {
                interruptLogged = true;
                LOG.warn("{} was interrupted (by a timer task?); the interrupt is cleared", thread.getName());
            }
            Entry head = pending.peek();
            long until = head == null ? PARKED_INDEFINITELY : head.deadlineNanos;
            parkedUntilNanos = until;
            if (!added.isEmpty() || stopped) {
                continue;
            }
            // Nothing from here to the park may park (a lock, a logger): it would take the permit of
            // an unpark from newTimeout, and this thread would then sleep past that timeout.
            beforeParkForTests.run();
            if (until == PARKED_INDEFINITELY) {
                LockSupport.park(this);
            } else {
                long waitNanos = until - System.nanoTime();
                if (waitNanos > 0) {
                    LockSupport.parkNanos(this, waitNanos);
                }
            }
        }
    }

    private void drainAdded() {
        for (Entry e = added.poll(); e != null; e = added.poll()) {
            if (e.state == Entry.WAITING) {
                pending.add(e);
            } else {
                dropCancelled(e); // counted by cancel(), never in `pending`
            }
        }
    }

    private void fireDue(long now) {
        for (Entry e = pending.peek(); e != null && e.deadlineNanos - now <= 0; e = pending.peek()) {
            pending.poll();
            if (e.casState(Entry.WAITING, Entry.EXPIRED)) {
                try {
                    e.task.run(e);
                } catch (Throwable t) {
                    LOG.warn("timer task {} threw", e.task, t);
                }
            } else {
                dropCancelled(e);
            }
        }
    }

    private void dropCancelled(Entry e) {
        cancelled.decrementAndGet();
        try {
            e.task.cancelled(e);
        } catch (Throwable t) {
            LOG.warn("timer task {} threw from cancelled()", e.task, t);
        }
    }

    private void sweepCancelled() {
        int n = cancelled.get();
        if (n >= SWEEP_CANCELLED && n * 2 >= pending.size()) {
            pending.removeIf(e -> {
                if (e.state == Entry.WAITING) {
                    return false;
                }
                dropCancelled(e);
                return true;
            });
        }
    }

    /** One pending task; its state moves once from WAITING to EXPIRED (ran) or CANCELLED. */
    private final class Entry implements Timeout, Comparable<Entry> {
        static final int WAITING = 0;
        static final int EXPIRED = 1;
        static final int CANCELLED = 2;

        private static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(Entry.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final TimerTask task;
        final long deadlineNanos;
        /** WAITING, EXPIRED or CANCELLED; a field, not an AtomicInteger: one object per timeout. */
        volatile int state = WAITING;

        Entry(TimerTask task, long deadlineNanos) {
            this.task = task;
            this.deadlineNanos = deadlineNanos;
        }

        boolean casState(int expected, int next) {
            return STATE.compareAndSet(this, expected, next);
        }

        @Override
        public Timer timer() {
            return QuietTimer.this;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return state == EXPIRED;
        }

        @Override
        public boolean isCancelled() {
            return state == CANCELLED;
        }

        @Override
        public boolean cancel() {
            if (!casState(WAITING, CANCELLED)) {
                return false;
            }
            // Each SWEEP_CANCELLED more cancelled timeouts (pending far ahead, perhaps): wake the
            // thread once to sweep them out.
            if (cancelled.incrementAndGet() % SWEEP_CANCELLED == 0) {
                LockSupport.unpark(thread);
            }
            return true;
        }

        @Override
        public int compareTo(Entry o) {
            return Long.compare(deadlineNanos - o.deadlineNanos, 0);
        }

        @Override
        public String toString() {
            return "QuietTimer.Timeout(" + task + ", "
                    + (isCancelled() ? "cancelled" : isExpired() ? "expired" : "waiting") + ")";
        }
    }
}
