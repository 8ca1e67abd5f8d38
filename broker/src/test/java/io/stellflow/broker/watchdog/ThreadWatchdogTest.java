package io.stellflow.broker.watchdog;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The watchdog's states, driven by a fake nano clock and {@link ThreadWatchdog#checkNow}: a thread
 * that stops is reported once and restarted, one that stalls is reported once with its stack, refused
 * and fenced until it beats again, and the metrics read alive and age.
 */
class ThreadWatchdogTest {
    private static final long STALL_MS = 5_000;

    private final AtomicLong clockNs = new AtomicLong(1_000_000_000L);
    private final ThreadWatchdog watchdog = new ThreadWatchdog(STALL_MS, clockNs::get);
    private final List<Thread> started = new ArrayList<>();

    @RegisterExtension
    final LogLines lines = LogLines.of(ThreadWatchdog.class).atLevel(Level.INFO);

    @AfterEach
    void release() throws InterruptedException {
        watchdog.close();
        for (Thread t : started) {
            t.interrupt();
            t.join(5_000);
        }
    }

    private void advanceMs(long ms) {
        clockNs.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    /** A thread that waits on {@code latch}, attached to {@code hb}. */
    private Thread parked(Heartbeat hb, CountDownLatch latch) {
        Thread t = Thread.ofPlatform().daemon().unstarted(() -> {
            try {
                latch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        hb.attach(t);
        t.start();
        started.add(t);
        Wait.until(Duration.ofSeconds(5), () -> t.getState() == Thread.State.WAITING, "the thread waits");
        return t;
    }

    /** Records what the watchdog asked; restart attaches a new parked thread unless told to fail. */
    private final class FakeOwner implements ThreadWatchdog.Owner {
        final Heartbeat hb;
        final CountDownLatch hold = new CountDownLatch(1);
        final AtomicInteger restarts = new AtomicInteger();
        final List<Boolean> stuckCalls = new ArrayList<>();
        volatile boolean closed;
        volatile boolean canRestart = true;

        FakeOwner(Heartbeat hb) {
            this.hb = hb;
        }

        @Override
        public boolean closed() {
            return closed;
        }

        @Override
        public boolean restart() {
            restarts.incrementAndGet();
            if (!canRestart) {
                return false;
            }
            parked(hb, hold);
            return true;
        }

        @Override
        public void stuck(boolean stuck) {
            stuckCalls.add(stuck);
        }
    }

    @Test
    void aBeatingThreadStaysRunningAndIsReportedAliveWithItsAge() {
        Heartbeat hb = watchdog.heartbeat("sf-append-0", "AppendService");
        FakeOwner owner = new FakeOwner(hb);
        parked(hb, owner.hold);
        watchdog.watch(hb, owner);
        for (int i = 0; i < 10; i++) {
            advanceMs(1_000);
            hb.beat();
            watchdog.checkNow();
        }
        advanceMs(700);
        assertThat(watchdog.fenceWanted()).isFalse();
        assertThat(owner.stuckCalls).isEmpty();
        assertThat(owner.restarts).hasValue(0);
        assertThat(lines.events()).isEmpty();
        List<String> seen = new ArrayList<>();
        watchdog.forEachThread((t, alive, ageMs) -> seen.add(t + " " + alive + " " + ageMs));
        assertThat(seen).containsExactly("sf-append-0 true 700");
    }

    @Test
    void aStalledThreadIsStuckOnceRefusedAndFencedUntilItBeatsAgain() {
        Heartbeat hb = watchdog.heartbeat("sf-append-0", "AppendService");
        FakeOwner owner = new FakeOwner(hb);
        Thread t = parked(hb, owner.hold);
        watchdog.watch(hb, owner);

        advanceMs(STALL_MS); // exactly the timeout: not yet
        watchdog.checkNow();
        assertThat(owner.stuckCalls).isEmpty();
        advanceMs(1);
        watchdog.checkNow();
        advanceMs(1_000);
        watchdog.checkNow();
        watchdog.checkNow();

        assertThat(owner.stuckCalls).containsExactly(true);
        assertThat(watchdog.fenceWanted()).isTrue();
        assertThat(watchdog.stucks()).isEqualTo(1);
        List<ILoggingEvent> stuck = lines.events(LogEvents.THREAD_STUCK);
        assertThat(stuck).hasSize(1);
        assertThat(stuck.get(0).getLevel()).isEqualTo(Level.ERROR);
        assertThat(stuck.get(0).getFormattedMessage())
                .isEqualTo("THREAD_STUCK thread=sf-append-0 owner=AppendService stalledMs=5001");
        assertThat(stuck.get(0).getThrowableProxy().getMessage()).contains(t.getName());
        assertThat(stuck.get(0).getThrowableProxy().getStackTraceElementProxyArray())
                .as("the stuck thread's own stack")
                .anySatisfy(e -> assertThat(e.getSTEAsString()).contains("CountDownLatch.await"));

        hb.beat();
        watchdog.checkNow();
        assertThat(owner.stuckCalls).containsExactly(true, false);
        assertThat(watchdog.fenceWanted()).isFalse();
        assertThat(lines.events(LogEvents.THREAD_RESUMED))
                .extracting(ILoggingEvent::getFormattedMessage)
                .containsExactly("THREAD_RESUMED thread=sf-append-0 owner=AppendService stalledMs=6001");
        assertThat(lines.events(LogEvents.THREAD_STOPPED)).isEmpty();
        assertThat(owner.restarts).hasValue(0);
    }

    @Test
    void aThreadThatEndsIsReportedOnceAndRestarted() throws InterruptedException {
        Heartbeat hb = watchdog.heartbeat("sf-append-1", "AppendService");
        FakeOwner owner = new FakeOwner(hb);
        CountDownLatch dies = new CountDownLatch(1);
        Thread first = parked(hb, dies);
        watchdog.watch(hb, owner);
        advanceMs(300);
        dies.countDown();
        first.join(5_000);

        watchdog.checkNow();
        watchdog.checkNow();

        assertThat(owner.restarts).hasValue(1);
        assertThat(watchdog.restarts()).isEqualTo(1);
        assertThat(hb.alive()).isTrue();
        assertThat(hb.worker()).isNotSameAs(first);
        assertThat(watchdog.fenceWanted()).isFalse();
        assertThat(lines.events(LogEvents.THREAD_STOPPED)).singleElement().satisfies(e -> {
            assertThat(e.getLevel()).isEqualTo(Level.ERROR);
            assertThat(e.getFormattedMessage())
                    .isEqualTo("THREAD_STOPPED thread=sf-append-1 owner=AppendService lastBeatMsAgo=300");
        });
    }

    @Test
    void aThreadThatCannotBeRestartedKeepsTheBrokerFencedAndIsRetriedQuietly() throws InterruptedException {
        Heartbeat hb = watchdog.heartbeat("sf-timer", "QuietTimer");
        FakeOwner owner = new FakeOwner(hb);
        owner.canRestart = false;
        CountDownLatch dies = new CountDownLatch(1);
        Thread first = parked(hb, dies);
        watchdog.watch(hb, owner);
        dies.countDown();
        first.join(5_000);

        watchdog.checkNow();
        watchdog.checkNow();
        assertThat(watchdog.fenceWanted()).isTrue();
        assertThat(owner.restarts).hasValue(2);
        assertThat(lines.events(LogEvents.THREAD_STOPPED)).hasSize(1);
        List<Boolean> alive = new ArrayList<>();
        watchdog.forEachThread((t, a, age) -> alive.add(a));
        assertThat(alive).containsExactly(false);

        owner.canRestart = true;
        watchdog.checkNow();
        assertThat(watchdog.fenceWanted()).isFalse();
        assertThat(watchdog.restarts()).isEqualTo(1);
        assertThat(lines.events(LogEvents.THREAD_STOPPED)).hasSize(1);
    }

    @Test
    void aClosedOwnersThreadEndingIsNoStopAndLeavesTheWatch() throws InterruptedException {
        Heartbeat hb = watchdog.heartbeat("sf-append-2", "AppendService");
        FakeOwner owner = new FakeOwner(hb);
        CountDownLatch dies = new CountDownLatch(1);
        Thread first = parked(hb, dies);
        watchdog.watch(hb, owner);
        owner.closed = true;
        dies.countDown();
        first.join(5_000);
        advanceMs(STALL_MS * 2);

        watchdog.checkNow();

        assertThat(owner.restarts).hasValue(0);
        assertThat(lines.events()).isEmpty();
        List<String> seen = new ArrayList<>();
        watchdog.forEachThread((t, a, age) -> seen.add(t));
        assertThat(seen).isEmpty();
    }

    @Test
    void aLivenessOnlyWatchIsNeverStuck() {
        Heartbeat hb = watchdog.heartbeat("broker-heartbeat", "BrokerLifecycle");
        FakeOwner owner = new FakeOwner(hb);
        parked(hb, owner.hold);
        watchdog.watchLiveness(hb, owner);
        advanceMs(STALL_MS * 10);
        watchdog.checkNow();
        assertThat(owner.stuckCalls).isEmpty();
        assertThat(watchdog.fenceWanted()).isFalse();
    }

    @Test
    void anExecutorBlockedByATaskIsStuckThroughItsProbeAndResumesWhenTheTaskEnds() {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        AtomicBoolean closed = new AtomicBoolean();
        try {
            Heartbeat hb =
                    watchdog.watchExecutor("sf-hw-checkpoint", "LeaderReplicationTasks", executor, true, closed::get);
            watchdog.checkNow(); // probes: the idle executor beats at once
            Wait.until(Duration.ofSeconds(5), () -> hb.worker() != null, "the probe ran");
            CountDownLatch block = new CountDownLatch(1);
            executor.execute(() -> {
                try {
                    block.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            advanceMs(STALL_MS + ThreadWatchdog.CHECK_INTERVAL_MS);
            watchdog.checkNow(); // a probe's beat may be one interval old: not yet stuck
            assertThat(watchdog.fenceWanted()).isFalse();
            advanceMs(1);
            watchdog.checkNow(); // its probe queues behind the blocked task
            assertThat(watchdog.fenceWanted()).isTrue();
            assertThat(lines.events(LogEvents.THREAD_STUCK)).hasSize(1);

            block.countDown();
            Wait.until(Duration.ofSeconds(5), () -> hb.lastBeatNs() == clockNs.get(), "the queued probe beat");
            watchdog.checkNow();
            assertThat(watchdog.fenceWanted()).isFalse();
            assertThat(lines.events(LogEvents.THREAD_RESUMED)).hasSize(1);

            closed.set(true);
            executor.shutdown();
            watchdog.checkNow();
            List<String> seen = new ArrayList<>();
            watchdog.forEachThread((t, a, age) -> seen.add(t));
            assertThat(seen).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }
}
