package io.stellflow.testsupport;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Deadline waits for tests: poll a condition every {@value #POLL_MS} ms until it holds or the timeout
 * passes. A timeout fails the test with an {@link AssertionError} naming what was awaited; so does an
 * interrupt of the waiting thread (its interrupt flag set again), so a test stopped by JUnit's
 * timeout or by a closing harness fails at once instead of sleeping on.
 *
 * <p>The deadline reads {@link System#nanoTime()}: it bounds real time on a loaded machine, the
 * condition is what a test checks (a test that needs controlled time injects a clock into the code it
 * tests instead).
 *
 * <p>Thread-safety: stateless; the condition runs on the calling thread only.
 */
public final class Wait {
    /** The pause between two checks: 10 ms keeps the wait short and costs no measurable CPU. */
    public static final long POLL_MS = 10;

    private Wait() {}

    /**
     * Returns as soon as {@code condition} is true.
     *
     * @param timeout how long to wait at most (checked once more after it passed)
     * @param condition checked on this thread, at least once
     * @param what what is awaited, for the failure message ("the follower caught up")
     * @throws AssertionError when the timeout passed or this thread was interrupted
     */
    public static void until(Duration timeout, BooleanSupplier condition, String what) {
        if (!poll(timeout, condition, what)) {
            throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
        }
    }

    /**
     * Returns as soon as {@code assertion} passes (throws no {@link AssertionError}), for conditions
     * that are assertions themselves (a metric series that is not scraped yet).
     *
     * @throws AssertionError when the timeout passed, with the assertion's last failure as its cause,
     *     or when this thread was interrupted
     */
    public static void untilPasses(Duration timeout, Runnable assertion, String what) {
        AssertionError[] last = new AssertionError[1];
        boolean passed = poll(
                timeout,
                () -> {
                    try {
                        assertion.run();
                        return true;
                    } catch (AssertionError notYet) {
                        last[0] = notYet;
                        return false;
                    }
                },
                what);
        if (!passed) {
            throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what, last[0]);
        }
    }

    /**
     * Whether {@code condition} became true within {@code timeout}, for tests that also expect it
     * to stay false.
     *
     * @param what what is awaited, for the failure message of an interrupt
     * @throws AssertionError when this thread was interrupted
     */
    public static boolean poll(Duration timeout, BooleanSupplier condition, String what) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() - deadlineNs > 0) {
                return false;
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                AssertionError failure = new AssertionError("interrupted while waiting for " + what);
                failure.initCause(e);
                throw failure;
            }
        }
    }
}
