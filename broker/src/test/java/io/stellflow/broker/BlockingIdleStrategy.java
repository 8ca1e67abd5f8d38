package io.stellflow.broker;

import io.stellflow.broker.append.IdleStrategy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * An {@code append.idle.strategy} for tests ({@code io.stellflow.broker.BlockingIdleStrategy}): parks
 * like {@code park}, and while {@link #block} holds a latch, the agent's next idle call waits on it
 * (a stuck agent, as a custom strategy that blocks or a hung disk makes one) until {@link #release}.
 *
 * <p>Thread-safety: the latch is static and shared by every agent of the JVM; one test at a time.
 */
public final class BlockingIdleStrategy implements IdleStrategy {
    private static final AtomicReference<CountDownLatch> GATE = new AtomicReference<>();

    /** From now on, every agent with this strategy blocks in its next idle call until {@link #release}. */
    static void block() {
        GATE.set(new CountDownLatch(1));
    }

    /** Lets blocked agents go on; later idle calls park as usual. */
    static void release() {
        CountDownLatch latch = GATE.getAndSet(null);
        if (latch != null) {
            latch.countDown();
        }
    }

    @Override
    public void idle(int workCount) {
        CountDownLatch latch = GATE.get();
        if (latch != null) {
            try {
                latch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        if (workCount == 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(MAX_PARK_MS));
        }
    }

    @Override
    public void reset() {}
}
