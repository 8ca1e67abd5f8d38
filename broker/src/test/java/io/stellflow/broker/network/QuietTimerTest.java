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

    /** Run once by the timer's thread on its way to park, when set. */
    private final AtomicReference<Runnable> beforePark = new AtomicReference<>();

    private final QuietTimer timer = new QuietTimer(new DefaultThreadFactory("quiet-timer-test", true), 10, () -> {
        Runnable r = beforePark.getAndSet(null);
        if (r != null) {
            r.run();
        }
    });

    @AfterEach
    void stop() {
        timer.stop();
    }

    /** Waits until the thread has slept through {@code quietMs} without waking up. */
    private void awaitAsleep(long quietMs) throws InterruptedException {
        long deadlineNs = System.nanoTime() + LONG.toNanos();
        while (true) {
            long before = timer.wakeUpsForTests();
            Thread.sleep(quietMs);
            if (timer.wakeUpsForTests() == before) {
                return;
            }
            assertThat(System.nanoTime() - deadlineNs)
                    .as("the timer's thread never sleeps")
                    .isNegative();
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
        CountDownLatch later = new CountDownLatch(1);
        timer.newTimeout(x -> later.countDown(), 50, TimeUnit.MILLISECONDS);
        assertThat(later.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(runs).as("ran once").hasValue(1);
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
    void aTimeoutOfferedBetweenTheThreadsLastLookAndItsParkIsNotMissed() throws Exception {
        for (int i = 0; i < 20; i++) {
            awaitAsleep(20);
            CountDownLatch atPark = new CountDownLatch(1);
            CountDownLatch offered = new CountDownLatch(1);
            beforePark.set(() -> {
                atPark.countDown();
                while (offered.getCount() > 0) {
                    Thread.onSpinWait(); // not await(): parking here would take newTimeout's unpark
                }
            });
            // Wake the thread (a deadline earlier than any pending) with a timeout cancelled at once:
            // it goes back to sleep with nothing pending (indefinitely) or until an earlier round's
            // cancelled hour-long timeout, and stops in the hook after its last look at what was added.
            timer.newTimeout(x -> {}, 0, TimeUnit.MILLISECONDS).cancel();
            if (i % 2 == 0) {
                timer.newTimeout(x -> {}, 1, TimeUnit.HOURS).cancel();
            }
            assertThat(atPark.await(LONG.toMillis(), TimeUnit.MILLISECONDS))
                    .as("round %d: the thread reached the hook", i)
                    .isTrue();
            CountDownLatch fired = new CountDownLatch(1);
            timer.newTimeout(x -> fired.countDown(), 0, TimeUnit.MILLISECONDS);
            offered.countDown();
            assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS))
                    .as("round %d", i)
                    .isTrue();
        }
    }

    @Test
    void anInterruptFromATaskIsClearedAndTheThreadStillSleeps() throws Exception {
        CountDownLatch fired = new CountDownLatch(1);
        timer.newTimeout(
                x -> {
                    Thread.currentThread().interrupt();
                    fired.countDown();
                },
                0,
                TimeUnit.MILLISECONDS);
        assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        awaitAsleep(100); // a set interrupt flag would make every park return at once
    }

    @Test
    void aCancelledTimeoutsTaskIsToldOnTheTimersThread() throws Exception {
        AtomicReference<Thread> toldOn = new AtomicReference<>();
        CountDownLatch told = new CountDownLatch(1);
        Timeout t = timer.newTimeout(
                new io.netty.util.TimerTask() {
                    @Override
                    public void run(Timeout timeout) {}

                    @Override
                    public void cancelled(Timeout timeout) {
                        toldOn.set(Thread.currentThread());
                        told.countDown();
                    }
                },
                20,
                TimeUnit.MILLISECONDS);
        t.cancel();
        assertThat(told.await(LONG.toMillis(), TimeUnit.MILLISECONDS))
                .as("told; timer thread %s after %d wake-ups", timer.threadStateForTests(), timer.wakeUpsForTests())
                .isTrue();
        assertThat(toldOn.get().getName()).startsWith("quiet-timer-test");
    }

    @Test
    void aHugeDelayNeitherFiresNowNorDisordersOthers() throws Exception {
        AtomicInteger huge = new AtomicInteger();
        timer.newTimeout(x -> huge.incrementAndGet(), Long.MAX_VALUE, TimeUnit.MILLISECONDS);
        timer.newTimeout(x -> huge.incrementAndGet(), Long.MAX_VALUE, TimeUnit.NANOSECONDS);
        CountDownLatch fired = new CountDownLatch(1);
        timer.newTimeout(x -> fired.countDown(), 20, TimeUnit.MILLISECONDS);
        assertThat(fired.await(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        Thread.sleep(50);
        assertThat(huge).hasValue(0);
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
        Wait.until(LONG, () -> timer.pendingForTests() < QuietTimer.SWEEP_CANCELLED, "cancelled timeouts swept out");
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
        assertThat(waiting.isCancelled()).as("the caller owns what is returned").isTrue();
        assertThat(ran.isExpired()).isTrue();
        assertThat(own.stop()).as("a second stop").isEmpty();
        assertThatThrownBy(() -> own.newTimeout(x -> {}, 0, TimeUnit.MILLISECONDS))
                .isInstanceOf(IllegalStateException.class);
    }
}
