package io.stellflow.server.common.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ExecutorCloseTest {
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void cleanUp() throws InterruptedException {
        release.countDown();
        executor.shutdownNow();
        assertThat(executor.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void interruptsTheRunningTaskDropsTheQueuedOnesAndReportsTermination() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        executor.submit(() -> {
            running.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
        });
        AtomicBoolean queuedRan = new AtomicBoolean();
        Future<?> queued = executor.submit(() -> queuedRan.set(true));
        running.await();

        assertThat(ExecutorClose.shutdownNowAndAwait(executor, 5_000)).isTrue();

        assertThat(executor.isTerminated()).isTrue();
        assertThat(interrupted).isTrue();
        assertThat(queuedRan).isFalse();
        assertThat(queued.isDone()).as("dropped, never run").isFalse();
        assertThat(ExecutorClose.shutdownNowAndAwait(executor, 0))
                .as("idempotent")
                .isTrue();
    }

    @Test
    void aTaskThatIgnoresTheInterruptIsWaitedForAtMostTheTimeout() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        executor.submit(() -> {
            running.countDown();
            while (true) {
                try {
                    release.await();
                    return;
                } catch (InterruptedException ignored) {
                    // a task that does not stop when asked
                }
            }
        });
        running.await();
        long startNs = System.nanoTime();

        assertThat(ExecutorClose.shutdownNowAndAwait(executor, 200)).isFalse();

        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs)).isGreaterThanOrEqualTo(200);
        assertThat(executor.isShutdown()).isTrue();
        assertThat(executor.isTerminated()).isFalse();
    }

    @Test
    void anInterruptedCallerStopsWaitingAndKeepsItsInterrupt() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        executor.submit(() -> {
            running.countDown();
            while (true) {
                try {
                    release.await();
                    return;
                } catch (InterruptedException ignored) {
                    // keeps the executor from terminating
                }
            }
        });
        running.await();
        Thread.currentThread().interrupt();
        try {
            long startNs = System.nanoTime();
            assertThat(ExecutorClose.shutdownNowAndAwait(executor, 60_000)).isFalse();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs))
                    .as("no 60 s wait")
                    .isLessThan(10_000);
            assertThat(executor.isShutdown()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aNegativeTimeoutIsABug() {
        assertThatThrownBy(() -> ExecutorClose.shutdownNowAndAwait(executor, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThat(executor.isShutdown()).as("nothing done").isFalse();
    }
}
