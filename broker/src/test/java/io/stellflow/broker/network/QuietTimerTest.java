package io.stellflow.broker.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.util.Timeout;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class QuietTimerTest {
    private static final Duration LONG = Duration.ofSeconds(10);

    private final QuietTimer timer = new QuietTimer(new DefaultThreadFactory("quiet-timer-test", true), 10);

    @AfterEach
    void stop() {
        timer.stop();
    }

    /** Waits until the thread has slept through {@code quietMs} without waking up. */
    private void awaitAsleep(long quietMs) throws InterruptedException {
        while (true) {
            long before = timer.wakeUpsForTests();
            Thread.sleep(quietMs);
            if (timer.wakeUpsForTests() == before) {
                return;
            }
        }
    }

    @Test
    void aTimeoutFiresOnceAfterItsDelayNeverEarly() throws Exception {
        AtomicLong firedAtNs = new AtomicLong();
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch fired = new CountDownLatch(1);
        long startNs = System.nanoTime();
        Timeout t = timer.newTimeout(
                x -> {
                    firedAtNs.set(System.nanoTime());
                    runs.incrementAndGet();
                    fired.countDown();
                },
                50,
                TimeUnit.MILLISECONDS);
        assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(firedAtNs.get() - startNs).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(t.isExpired()).isTrue();
        assertThat(t.isCancelled()).isFalse();
        assertThat(t.cancel()).as("too late to cancel").isFalse();
        assertThat(t.timer()).isSameAs(timer);
        Thread.sleep(50);
        assertThat(runs).hasValue(1);
    }

    @Test
    void aCancelledTimeoutNeverRuns() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Timeout t = timer.newTimeout(x -> runs.incrementAndGet(), 30, TimeUnit.MILLISECONDS);
        assertThat(t.cancel()).isTrue();
        assertThat(t.cancel()).isFalse();
        assertThat(t.isCancelled()).isTrue();
        CountDownLatch later = new CountDownLatch(1);
        timer.newTimeout(x -> later.countDown(), 100, TimeUnit.MILLISECONDS);
        assertThat(later.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(runs).hasValue(0);
        assertThat(t.isExpired()).isFalse();
    }

    @Test
    void theThreadSleepsWhileNothingIsPendingAndWakesForNewWork() throws Exception {
        awaitAsleep(100);
        long idle = timer.wakeUpsForTests();
        Thread.sleep(300);
        // A ticking wheel of 10 ms would have woken about 30 times here.
        assertThat(timer.wakeUpsForTests()).as("no wake-up while idle").isEqualTo(idle);

        CountDownLatch fired = new CountDownLatch(1);
        timer.newTimeout(x -> fired.countDown(), 20, TimeUnit.MILLISECONDS);
        assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        awaitAsleep(100);
        assertThat(timer.wakeUpsForTests() - idle)
                .as("woken to take the timeout, then at its deadline")
                .isLessThanOrEqualTo(4);
    }

    @Test
    void anEarlierDeadlineWakesTheThreadSleepingUntilALaterOne() throws Exception {
        timer.newTimeout(x -> {}, 1, TimeUnit.HOURS);
        awaitAsleep(100);
        CountDownLatch fired = new CountDownLatch(1);
        long startNs = System.nanoTime();
        timer.newTimeout(x -> fired.countDown(), 20, TimeUnit.MILLISECONDS);
        assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(System.nanoTime() - startNs).isLessThan(LONG.toNanos());
    }

    @Test
    void noWakeUpIsLostBetweenTheThreadsLastLookAndItsSleep() throws Exception {
        // Each round catches the thread just before, during or after it goes to sleep.
        for (int i = 0; i < 300; i++) {
            CountDownLatch fired = new CountDownLatch(1);
            timer.newTimeout(x -> fired.countDown(), 0, TimeUnit.MILLISECONDS);
            assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS))
                    .as("round %d", i)
                    .isTrue();
        }
    }

    @Test
    void manySchedulersAndCancellersEachTimeoutRunsOnceOrNever() throws Exception {
        int threads = 4;
        int perThread = 5_000;
        AtomicInteger[] runs = new AtomicInteger[threads * perThread];
        boolean[] cancelledOk = new boolean[runs.length];
        for (int i = 0; i < runs.length; i++) {
            runs[i] = new AtomicInteger();
        }
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int base = t * perThread;
            ts.add(Thread.ofPlatform().start(() -> {
                SplittableRandom random = new SplittableRandom(base);
                for (int i = 0; i < perThread; i++) {
                    int slot = base + i;
                    Timeout timeout = timer.newTimeout(
                            x -> runs[slot].incrementAndGet(), random.nextInt(50), TimeUnit.MILLISECONDS);
                    if (random.nextBoolean()) {
                        cancelledOk[slot] = timeout.cancel();
                    }
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        Wait.until(
                LONG,
                () -> {
                    for (int i = 0; i < runs.length; i++) {
                        if (!cancelledOk[i] && runs[i].get() == 0) {
                            return false;
                        }
                    }
                    return true;
                },
                "every timeout not cancelled ran");
        Thread.sleep(100);
        for (int i = 0; i < runs.length; i++) {
            assertThat(runs[i].get()).as("timeout %d", i).isEqualTo(cancelledOk[i] ? 0 : 1);
        }
    }

    @Test
    void cancelledTimeoutsFarAheadDoNotPileUp() throws Exception {
        List<Timeout> ts = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            ts.add(timer.newTimeout(x -> {}, 1, TimeUnit.HOURS));
        }
        Wait.until(LONG, () -> timer.pendingForTests() == 10_000, "all taken");
        ts.forEach(Timeout::cancel);
        Wait.until(
                LONG,
                () -> timer.pendingForTests() < QuietTimer.SWEEP_CANCELLED,
                "cancelled timeouts swept out (pending " + timer.pendingForTests() + ")");
    }

    @Test
    void aTaskThatThrowsIsLoggedAndTheTimerGoesOn() throws Exception {
        timer.newTimeout(
                x -> {
                    throw new IllegalStateException("boom");
                },
                0,
                TimeUnit.MILLISECONDS);
        CountDownLatch fired = new CountDownLatch(1);
        timer.newTimeout(x -> fired.countDown(), 10, TimeUnit.MILLISECONDS);
        assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void stopReturnsWhatNeitherRanNorWasCancelledAndRefusesNewTimeouts() throws Exception {
        QuietTimer own = new QuietTimer(new DefaultThreadFactory("quiet-timer-stop", true), 10);
        Timeout waiting = own.newTimeout(x -> {}, 1, TimeUnit.HOURS);
        Timeout cancelled = own.newTimeout(x -> {}, 1, TimeUnit.HOURS);
        cancelled.cancel();
        CountDownLatch fired = new CountDownLatch(1);
        Timeout ran = own.newTimeout(x -> fired.countDown(), 0, TimeUnit.MILLISECONDS);
        assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        AtomicReference<Throwable> fromTask = new AtomicReference<>();
        CountDownLatch tried = new CountDownLatch(1);
        own.newTimeout(
                x -> {
                    try {
                        own.stop();
                    } catch (Throwable e) {
                        fromTask.set(e);
                    }
                    tried.countDown();
                },
                0,
                TimeUnit.MILLISECONDS);
        assertThat(tried.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(fromTask.get()).isInstanceOf(IllegalStateException.class);

        Set<Timeout> left = own.stop();
        assertThat(left).containsExactly(waiting);
        assertThat(ran.isExpired()).isTrue();
        assertThatThrownBy(() -> own.newTimeout(x -> {}, 0, TimeUnit.MILLISECONDS))
                .isInstanceOf(IllegalStateException.class);
    }
}
