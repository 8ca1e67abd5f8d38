package io.stellflow.perf.jmh.broker;

/**
 * Runs a broker benchmark's trial teardown after the JMH run in this JVM is over, so that {@code
 * -prof gc} does not charge what the teardown allocates to the last measured iteration.
 *
 * <p>Why: JMH calls a {@code @TearDown(Level.Trial)} method on the benchmark thread at the end of
 * the last measured iteration, before the profilers take their end-of-iteration snapshot, and the
 * GC profiler counts what every thread of the JVM allocated in between. Stopping {@link
 * ProducePathBench}'s combined node (broker and Ratis controller) allocates about 3.6 MB: on
 * 2026-12-03 its iterations 1-4 measured about 2,900 B per 1 MiB request, the fifth about 8,500,
 * the mean 4,081. Handing the work to another thread from the teardown is not enough: that thread's
 * bytes count too while the iteration lasts, and so does code that runs for the first time there
 * (starting a thread and linking a lambda in the teardown still added about 60-170 KB to the last
 * iteration, 2026-12-04).
 *
 * <p>How: {@link #start}, called at the end of the benchmark's setup with the teardown as an action,
 * finds the JVM's {@code main} thread and starts, right then, a non-daemon thread that waits for it
 * to end and then runs the action. In JMH's forked JVM (the default, {@code @Fork(1)}) {@code main}
 * runs JMH's forked main, which returns only after the last iteration has been measured, the
 * profilers stopped and the results sent to the host. The waiting thread allocates nothing while it
 * waits, and the benchmark's {@code @TearDown} only calls {@link #runIfNotStarted}, which does
 * nothing then. Non-daemon because the JVM must not exit halfway through the teardown (a node half
 * stopped, a data directory half deleted); JMH's forked main reports threads still running after 5
 * s and halts the JVM after 30 s ({@code -Djmh.shutdownTimeout}), more than a node needs to stop.
 * Considered and not taken: a JVM shutdown hook, which never runs, because the node's own non-daemon
 * threads keep the JVM alive until that halt; an iteration-level teardown, which JMH also runs
 * inside the measured iteration.
 *
 * <p>Limits: without a fork ({@code -f 0}) {@code main} is JMH's host, so every trial's resources
 * stay open until the whole run ends. With no live {@code main} thread (JMH started through its API
 * after {@code main} ended) nothing waits, and {@link #runIfNotStarted} runs the teardown at once on
 * the calling thread, as JMH would have, counted. A teardown that fails after the run cannot fail
 * it: its exception goes to the thread's uncaught-exception handler (printed to standard error,
 * which JMH forwards to the host until the JVM exits). Checks that must fail the run belong in the
 * {@code @TearDown} method itself.
 *
 * <p>Thread-safety: the action runs once, on the waiting thread or on the caller of {@link
 * #runIfNotStarted}, never on both; call {@link #runIfNotStarted} from the benchmark's teardown only.
 */
final class TeardownAfterRun {
    /** A teardown step that may throw, e.g. closing a channel. */
    @FunctionalInterface
    interface Action {
        void run() throws Exception;
    }

    private final Action action;
    private final Thread waiter;

    private TeardownAfterRun(Action action, Thread waiter) {
        this.action = action;
        this.waiter = waiter;
    }

    /**
     * Schedules {@code action} to run on a new non-daemon thread named {@code threadName} once the
     * JVM's live, non-daemon {@code main} thread has ended; when there is none, leaves it to {@link
     * #runIfNotStarted}. Call it at the end of {@code @Setup(Level.Trial)}, once every resource the
     * action closes exists (it walks every thread once and starts one).
     */
    static TeardownAfterRun start(String threadName, Action action) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("main") && !t.isDaemon() && t.isAlive() && t != Thread.currentThread()) {
                return afterThread(t, threadName, action);
            }
        }
        return new TeardownAfterRun(action, null);
    }

    /**
     * As {@link #start}, waiting for {@code runThread} instead of {@code main} ({@code null} or an
     * ended thread: nothing waits); for tests.
     */
    static TeardownAfterRun afterThread(Thread runThread, String threadName, Action action) {
        if (runThread == null || !runThread.isAlive()) {
            return new TeardownAfterRun(action, null);
        }
        Thread waiter = Thread.ofPlatform().daemon(false).name(threadName).start(() -> {
            boolean interrupted = awaitEnd(runThread);
            try {
                action.run();
            } catch (Exception e) {
                throw new IllegalStateException(threadName + " failed after the run", e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        return new TeardownAfterRun(action, waiter);
    }

    /** Whether a thread waits to run the teardown after the run (false: {@link #runIfNotStarted} runs it). */
    boolean deferred() {
        return waiter != null;
    }

    /**
     * Runs the teardown now, on this thread, when no thread waits to run it after the run; else
     * returns at once, allocating nothing.
     *
     * @throws Exception what the teardown throws when it runs here
     */
    void runIfNotStarted() throws Exception {
        if (waiter == null) {
            action.run();
        }
    }

    /**
     * Waits for {@code thread} to end, through interrupts (the teardown must not start inside a
     * measured iteration, nor run with the interrupt flag set); returns whether one came.
     */
    private static boolean awaitEnd(Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        return interrupted;
    }
}
