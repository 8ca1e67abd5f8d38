package io.stellflow.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WaitTest {
    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    @Test
    void returnsAsSoonAsTheConditionHolds() {
        AtomicInteger checks = new AtomicInteger();
        Wait.until(Duration.ofSeconds(10), () -> checks.incrementAndGet() == 3, "the third check");
        assertThat(checks).hasValue(3);
    }

    @Test
    void aTimeoutFailsNamingWhatWasAwaited() {
        long startNs = System.nanoTime();
        assertThatThrownBy(() -> Wait.until(Duration.ofMillis(50), () -> false, "the impossible"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("timed out after 50 ms waiting for the impossible");
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
    }

    @Test
    void aConditionTrueAtOnceHoldsEvenWithAZeroTimeout() {
        Wait.until(Duration.ZERO, () -> true, "nothing");
    }

    @Test
    void anInterruptFailsAtOnceAndKeepsTheFlag() {
        Thread.currentThread().interrupt();
        long startNs = System.nanoTime();
        assertThatThrownBy(() -> Wait.until(Duration.ofSeconds(30), () -> false, "the follower"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("interrupted while waiting for the follower")
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void pollReportsWhetherTheConditionBecameTrue() {
        AtomicInteger checks = new AtomicInteger();
        assertThat(Wait.poll(Duration.ofSeconds(10), () -> checks.incrementAndGet() > 1, "two checks"))
                .isTrue();
        assertThat(Wait.poll(Duration.ofMillis(30), () -> false, "never")).isFalse();
    }

    @Test
    void untilPassesRetriesAFailingAssertionAndKeepsTheLastFailureAsCause() {
        AtomicInteger runs = new AtomicInteger();
        Wait.untilPasses(
                Duration.ofSeconds(10), () -> assertThat(runs.incrementAndGet()).isEqualTo(2), "the second run");
        assertThat(runs).hasValue(2);

        assertThatThrownBy(() -> Wait.untilPasses(
                        Duration.ofMillis(30), () -> assertThat("scraped").isEqualTo("absent"), "a series"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("timed out after 30 ms waiting for a series")
                .cause()
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("absent");
    }
}
