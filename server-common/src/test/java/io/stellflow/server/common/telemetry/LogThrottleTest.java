package io.stellflow.server.common.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LogThrottleTest {
    private long nowNs = -5; // nanoTime may be negative

    @Test
    void firstCallTakesTheLineThenOnePerInterval() {
        LogThrottle throttle = new LogThrottle(() -> nowNs, 10);
        assertThat(throttle.tryAcquire()).isTrue();
        assertThat(throttle.tryAcquire()).isFalse();
        nowNs += TimeUnit.SECONDS.toNanos(10) - 1;
        assertThat(throttle.tryAcquire()).isFalse();
        nowNs += 1;
        assertThat(throttle.tryAcquire()).isTrue();
        assertThat(throttle.tryAcquire()).isFalse();
        nowNs += TimeUnit.MINUTES.toNanos(5);
        assertThat(throttle.tryAcquire()).isTrue();
        assertThat(throttle.intervalSeconds()).isEqualTo(10);
    }

    @Test
    void theEventsThatTookNoLineAreCountedUntilTaken() {
        LogThrottle throttle = new LogThrottle(() -> nowNs, 10);
        assertThat(throttle.tryAcquire()).isTrue();
        assertThat(throttle.takeSuppressed()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(throttle.tryAcquire()).isFalse();
        }
        nowNs += TimeUnit.SECONDS.toNanos(10);
        assertThat(throttle.tryAcquire()).isTrue();
        assertThat(throttle.takeSuppressed()).isEqualTo(3);
        assertThat(throttle.takeSuppressed()).isZero();
    }

    @Test
    void theNoteNamesTheCountAndTheLevelOrIsEmpty() {
        LogThrottle throttle = new LogThrottle(() -> nowNs, 10);
        assertThat(throttle.tryAcquire()).isTrue();
        assertThat(throttle.takeSuppressedNote("ERROR")).isEmpty();
        assertThat(throttle.tryAcquire()).isFalse();
        assertThat(throttle.tryAcquire()).isFalse();
        nowNs += TimeUnit.SECONDS.toNanos(10);
        assertThat(throttle.tryAcquire()).isTrue();
        assertThat(throttle.takeSuppressedNote("ERROR")).isEqualTo("2 more since the last ERROR at DEBUG; ");
    }

    @Test
    void anIntervalMustBePositive() {
        assertThatThrownBy(() -> new LogThrottle(() -> 0, 0)).hasMessageContaining("intervalSeconds 0");
    }
}
