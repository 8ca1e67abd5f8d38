package io.stellflow.perf.jmh.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class TeardownAfterRunTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void theTeardownRunsOnANonDaemonThreadOnlyAfterTheRunThreadHasEnded() throws Exception {
        CountDownLatch runOver = new CountDownLatch(1);
        Thread run = Thread.ofPlatform().name("fake-jmh-main").start(() -> awaitQuietly(runOver));
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        AtomicInteger runs = new AtomicInteger();

        TeardownAfterRun afterRun = TeardownAfterRun.afterThread(run, "test-teardown", () -> {
            runs.incrementAndGet();
            ranOn.set(Thread.currentThread());
        });

        assertThat(afterRun.deferred()).isTrue();
        Thread waiter = find("test-teardown");
        assertThat(waiter).isNotNull();
        assertThat(waiter.isDaemon()).isFalse();
        // Blocked in join() on the run thread, which is still alive: the action cannot have run.
        Wait.until(TIMEOUT, () -> waiter.getState() == Thread.State.WAITING, "the teardown thread waits");
        // What the benchmark's @TearDown calls inside the last iteration: nothing runs there.
        afterRun.runIfNotStarted();
        assertThat(run.isAlive()).isTrue();
        assertThat(runs).hasValue(0);

        runOver.countDown();
        waiter.join(TIMEOUT.toMillis());
        assertThat(waiter.isAlive()).isFalse();
        assertThat(ranOn.get()).isSameAs(waiter);
        assertThat(runs).hasValue(1);
    }

    @Test
    void withTheRunThreadAlreadyEndedTheTeardownRunsOnceInTheBenchmarksTeardown() throws Exception {
        Thread run = Thread.ofPlatform().start(() -> {});
        run.join();
        AtomicReference<Thread> ranOn = new AtomicReference<>();

        TeardownAfterRun afterRun =
                TeardownAfterRun.afterThread(run, "test-teardown", () -> ranOn.set(Thread.currentThread()));
        assertThat(afterRun.deferred()).isFalse();
        assertThat(ranOn.get()).isNull();

        afterRun.runIfNotStarted();
        assertThat(ranOn.get()).isSameAs(Thread.currentThread());
    }

    @Test
    void withoutARunThreadAFailingTeardownFailsTheBenchmarksTeardown() {
        TeardownAfterRun afterRun = TeardownAfterRun.afterThread(null, "test-teardown", () -> {
            throw new IOException("disk gone");
        });

        assertThatThrownBy(afterRun::runIfNotStarted)
                .isInstanceOf(IOException.class)
                .hasMessage("disk gone");
    }

    private static Thread find(String name) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name)) {
                return t;
            }
        }
        return null;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
