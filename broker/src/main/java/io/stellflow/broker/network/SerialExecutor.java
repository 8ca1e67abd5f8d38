package io.stellflow.broker.network;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared pool. One instance per connection keeps
 * that connection's requests in order (so pipelined Produce requests to one partition are appended in
 * the order sent) while different connections run in parallel.
 *
 * <p>A drain runs at most {@value #MAX_TASKS_PER_DRAIN} tasks, then yields the pool thread so one busy
 * connection cannot starve the others.
 *
 * <p>While {@code ready} is false (a connection whose client does not read its responses) no further
 * task starts: they wait, in order, until {@link #resume} after {@code ready} turned true again.
 *
 * <p>Thread-safety: {@link #execute} and {@link #resume} may be called from any thread.
 *
 * <p>Errors: a task that throws is logged and does not stop later tasks; {@link #execute} throws
 * {@link RejectedExecutionException} when the pool is shut down (the task is not queued). Tasks
 * already queued then run on the thread that finds the pool refusing their drain ({@link #resume},
 * {@link #tryRunHere}, or the last pool drain): none is left behind.
 */
public final class SerialExecutor implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(SerialExecutor.class);

    /** Tasks per turn on a pool thread; 16 requests of a pipelining client, then others get a turn. */
    static final int MAX_TASKS_PER_DRAIN = 16;

    private final Executor pool;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final AtomicInteger pending = new AtomicInteger();
    /** One drain task per executor, not a new method reference per schedule (one fewer object per request). */
    private final Runnable drainTask = this::drain;

    private final BooleanSupplier ready;

    /** @param pool the shared executor the tasks run on */
    public SerialExecutor(Executor pool) {
        this(pool, () -> true);
    }

    /**
     * @param pool the shared executor the tasks run on
     * @param ready checked before each task; false holds the remaining tasks until {@link #resume}
     */
    public SerialExecutor(Executor pool, BooleanSupplier ready) {
        this.pool = pool;
        this.ready = ready;
    }

    /**
     * Runs held tasks again once {@code ready} holds; call after it turned true. When the pool is
     * shut down they run on the calling thread instead (a closing broker: Netty fires channelInactive
     * after the close future completed, so the pool may already be down), never left queued: each
     * task owns a request frame. Never throws {@link RejectedExecutionException}.
     */
    public void resume() {
        if (!tasks.isEmpty() && ready.getAsBoolean()) {
            try {
                schedule();
            } catch (RejectedExecutionException e) {
                drainHereAfterRejection();
            }
        }
    }

    /**
     * Queues {@code task} behind this executor's others.
     *
     * @throws RejectedExecutionException the pool is shut down and {@code task} was not queued (the
     *     caller still owns what it holds); tasks queued before it, or by threads that met this
     *     refusal's claim, run here first. Not thrown when another thread already ran {@code task}.
     */
    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        pending.incrementAndGet();
        try {
            schedule();
        } catch (RejectedExecutionException e) {
            boolean notRun = tasks.remove(task);
            if (notRun) {
                pending.decrementAndGet();
            }
            // Others' tasks may wait behind the claim this refusal held (their schedule() found it
            // taken and returned): run them here rather than leave them queued.
            drainHereAfterRejection();
            if (notRun) {
                throw e;
            }
        }
    }

    /**
     * Runs {@code task} on the calling thread now, in its turn, when this executor is idle (no task
     * queued or running, and {@code ready} holds): as if {@link #execute}d and drained at once, without
     * the hop to the pool. While it runs, tasks {@link #execute}d meanwhile wait for it, and they are
     * scheduled when it returns. The caller must be a thread that may run the task (it must not block
     * where blocking is forbidden).
     *
     * <p>When the pool is shut down, tasks executed while it ran are run on the caller too,
     * after it ({@link #resume}).
     *
     * @return true when it ran (a task that throws is logged, as in a drain); false when it did not
     *     (the executor is busy or held): then the caller {@link #execute}s it
     */
    public boolean tryRunHere(Runnable task) {
        if (!ready.getAsBoolean() || !tasks.isEmpty() || !scheduled.compareAndSet(false, true)) {
            return false;
        }
        if (!tasks.isEmpty()) {
            // Queued between the check and the claim: theirs is the turn. Their schedule() saw the
            // claim and left it to us.
            scheduled.set(false);
            resume();
            return false;
        }
        pending.incrementAndGet();
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            LOG.error("Request task failed", e);
        } finally {
            pending.decrementAndGet();
            scheduled.set(false);
        }
        resume(); // as after a drain: tasks executed while this one ran wait for a schedule
        return true;
    }

    /** Tasks submitted and not yet finished. */
    public int pending() {
        return pending.get();
    }

    private void schedule() {
        if (scheduled.compareAndSet(false, true)) {
            try {
                pool.execute(drainTask);
            } catch (RejectedExecutionException e) {
                scheduled.set(false);
                throw e;
            }
        }
    }

    private void drain() {
        try {
            runTasks(MAX_TASKS_PER_DRAIN, true);
        } finally {
            scheduled.set(false);
        }
        // Checked after clearing scheduled: a resume() that found it still set is not lost.
        if (!tasks.isEmpty() && ready.getAsBoolean()) {
            try {
                schedule();
            } catch (RejectedExecutionException e) {
                drainHereAfterRejection();
            }
        }
    }

    /**
     * The pool refused a drain (it is shut down): finishes the queue on this thread, so every task
     * (and the buffer it owns) is completed exactly once, holding the drain's claim as a pool drain
     * would (one task at a time, in order). Tasks queued while it runs are taken too; a thread that
     * finds the claim taken leaves its tasks to the holder.
     */
    private void drainHereAfterRejection() {
        while (!tasks.isEmpty() && scheduled.compareAndSet(false, true)) {
            try {
                runTasks(Integer.MAX_VALUE, false);
            } finally {
                scheduled.set(false);
            }
        }
    }

    private void runTasks(int max, boolean whenReady) {
        for (int i = 0; i < max; i++) {
            if (whenReady && !ready.getAsBoolean()) {
                return;
            }
            Runnable task = tasks.poll();
            if (task == null) {
                return;
            }
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                // An Error (for example an OutOfDirectMemoryError) must not end the drain either:
                // the connection's later requests would wait until it sent another one.
                LOG.error("Request task failed", e);
            } finally {
                pending.decrementAndGet();
            }
        }
    }
}
