package io.stellflow.broker.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SerialExecutorTest {
    @Test
    void runsOneConnectionsTasksInOrderAndOneAtATime() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            SerialExecutor serial = new SerialExecutor(pool);
            List<Integer> order = new CopyOnWriteArrayList<>();
            AtomicInteger running = new AtomicInteger();
            AtomicInteger maxRunning = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(1000);
            for (int i = 0; i < 1000; i++) {
                int n = i;
                serial.execute(() -> {
                    maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
                    order.add(n);
                    running.decrementAndGet();
                    done.countDown();
                });
            }
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(maxRunning.get()).isEqualTo(1);
            for (int i = 0; i < 1000; i++) {
                assertThat(order.get(i)).isEqualTo(i);
            }
            // pending drops right after the last task returns, which may be just after countDown().
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (serial.pending() != 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(serial.pending()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFailingTaskDoesNotStopTheNextOnes() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            SerialExecutor serial = new SerialExecutor(pool);
            CountDownLatch ran = new CountDownLatch(1);
            serial.execute(() -> {
                throw new IllegalStateException("boom");
            });
            serial.execute(ran::countDown);
            assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aTaskFailingWithAnErrorDoesNotStallTheQueue() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            SerialExecutor serial = new SerialExecutor(pool);
            CountDownLatch ran = new CountDownLatch(2);
            serial.execute(() -> {
                throw new OutOfMemoryError("Cannot reserve 62914560 bytes of direct buffer memory (test)");
            });
            serial.execute(ran::countDown);
            serial.execute(ran::countDown);
            assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
            // pending() drops just after a task returns, so the last countDown can be seen first.
            Wait.until(Duration.ofSeconds(5), () -> serial.pending() == 0, "no task pending");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void queuedTasksStillRunWhenThePoolShutsDownMidway() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        SerialExecutor serial = new SerialExecutor(pool);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        serial.execute(() -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        for (int i = 0; i < 3 * SerialExecutor.MAX_TASKS_PER_DRAIN; i++) {
            serial.execute(ran::incrementAndGet);
        }
        pool.shutdown();
        gate.countDown();
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        assertThat(ran.get()).isEqualTo(3 * SerialExecutor.MAX_TASKS_PER_DRAIN);
    }

    /**
     * A closing broker: the connection held its requests (unwritable), the pool was shut down, and
     * then the channel's close made it ready. Netty completes a close future before it fires
     * channelInactive, so the broker's close can shut the pool down first: resume() must then run the
     * held tasks here (each owns a request frame) instead of throwing and stranding them.
     */
    @Test
    void heldTasksRunHereWhenTheyAreResumedAfterThePoolShutDown() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        AtomicBoolean ready = new AtomicBoolean();
        SerialExecutor serial = new SerialExecutor(pool, ready::get);
        List<String> ran = new CopyOnWriteArrayList<>();
        Thread caller = Thread.currentThread();
        for (int i = 0; i < 3; i++) {
            int n = i;
            serial.execute(() -> ran.add(n + (Thread.currentThread() == caller ? " here" : " on the pool")));
        }
        pool.shutdown();
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        assertThat(ran).as("held while not ready").isEmpty();

        ready.set(true);
        serial.resume();

        assertThat(ran).containsExactly("0 here", "1 here", "2 here");
        assertThat(serial.pending()).isZero();
    }

    /** A request read after the pool shut down is refused, and the held ones before it run here. */
    @Test
    void anExecuteRefusedByTheShutPoolRunsTheHeldTasksAndThrowsForItsOwn() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        SerialExecutor serial = new SerialExecutor(pool, () -> false);
        List<Integer> ran = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 3; i++) {
            int n = i;
            serial.execute(() -> ran.add(n));
        }
        pool.shutdown();
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();

        assertThatThrownBy(() -> serial.execute(() -> ran.add(3))).isInstanceOf(RejectedExecutionException.class);

        assertThat(ran).as("the held ones ran, the refused one did not").containsExactly(0, 1, 2);
        assertThat(serial.pending()).isZero();
    }

    @Test
    void tryRunHereRunsOnTheCallerOnlyWhenIdleAndTasksExecutedMeanwhileRunAfterIt() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            SerialExecutor serial = new SerialExecutor(pool);
            List<String> order = new CopyOnWriteArrayList<>();
            Thread caller = Thread.currentThread();
            CountDownLatch after = new CountDownLatch(1);
            boolean ran = serial.tryRunHere(() -> {
                order.add(Thread.currentThread() == caller ? "inline on the caller" : "elsewhere");
                serial.execute(() -> {
                    order.add("executed meanwhile");
                    after.countDown();
                });
                assertThat(serial.pending()).isEqualTo(2);
            });
            assertThat(ran).isTrue();
            assertThat(after.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(order).containsExactly("inline on the caller", "executed meanwhile");

            // Busy (a task running on the pool): not run here, the caller executes it behind.
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(1);
            serial.execute(() -> {
                started.countDown();
                awaitQuietly(release);
            });
            assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
            AtomicInteger runs = new AtomicInteger();
            assertThat(serial.tryRunHere(runs::incrementAndGet)).isFalse();
            release.countDown();
            Wait.until(Duration.ofSeconds(5), () -> serial.pending() == 0, "no task pending");
            assertThat(runs.get()).isZero();

            // Held (the connection cannot take responses): not run here either.
            SerialExecutor held = new SerialExecutor(pool, () -> false);
            assertThat(held.tryRunHere(runs::incrementAndGet)).isFalse();
            assertThat(runs.get()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
