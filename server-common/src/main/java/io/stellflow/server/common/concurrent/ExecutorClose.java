package io.stellflow.server.common.concurrent;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Closing a component's own background executor (a periodic checker, a checkpoint writer, the ISR
 * thread): stop it now and wait a bounded time for the running task, as their {@code close()}
 * methods promise ("waits up to 5 s for a running pass").
 *
 * <p>Thread-safety: stateless; call it from the closing thread, never from a task of {@code
 * executor} (it would wait for itself until the timeout) nor while holding a lock that task takes.
 */
public final class ExecutorClose {
    private ExecutorClose() {}

    /**
     * {@link ExecutorService#shutdownNow() Shuts the executor down now} (queued tasks are dropped,
     * the running one is interrupted) and waits up to {@code timeoutMs} for it to terminate. An
     * interrupt of the calling thread ends the wait and is kept: the flag is set again. Idempotent,
     * also on an executor that is already terminated.
     *
     * @param timeoutMs how long to wait at most, in milliseconds; 0 does not wait
     * @return true when the executor terminated in time; false when a task was still running at the
     *     timeout (it ignored the interrupt) or the calling thread was interrupted
     */
    public static boolean shutdownNowAndAwait(ExecutorService executor, long timeoutMs) {
        if (timeoutMs < 0) {
            throw new IllegalArgumentException("timeoutMs must be >= 0: " + timeoutMs);
        }
        executor.shutdownNow();
        try {
            return executor.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
