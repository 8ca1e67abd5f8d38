package io.stellflow.broker.append;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.server.common.config.ConfigException;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** {@code append.idle.strategy}: the two built-in names and a class of the operator's own. */
class IdleStrategyTest {
    /** A strategy of "the operator's own": counts its instances and parks 1 ms when idle. */
    public static final class CountingIdle implements IdleStrategy {
        static final AtomicInteger CREATED = new AtomicInteger();
        static final AtomicInteger IDLE_CALLS = new AtomicInteger();

        public CountingIdle() {
            CREATED.incrementAndGet();
        }

        @Override
        public void idle(int workCount) {
            IDLE_CALLS.incrementAndGet();
            if (workCount == 0) {
                LockSupport.parkNanos(1_000_000);
            }
        }

        @Override
        public void reset() {}
    }

    /** Not an {@link IdleStrategy}. */
    public static final class NotAStrategy {}

    @Test
    void theBuiltInNamesAnyCase() {
        assertThat(IdleStrategy.named("park")).isInstanceOf(IdleStrategy.Park.class);
        assertThat(IdleStrategy.named("BACKOFF")).isInstanceOf(IdleStrategy.Backoff.class);
    }

    @Test
    void aClassNameGivesEachAgentItsOwnInstanceAndTheAgentsUseIt() throws Exception {
        int before = CountingIdle.CREATED.get();
        try (AppendService service = new AppendService(2, CountingIdle.class.getName(), 16, 1 << 20, 1 << 20)) {
            assertThat(CountingIdle.CREATED.get() - before).as("one per agent").isEqualTo(2);
            int calls = CountingIdle.IDLE_CALLS.get();
            service.start();
            Wait.until(Duration.ofSeconds(10), () -> CountingIdle.IDLE_CALLS.get() != calls, "an agent calling idle()");
        }
    }

    @Test
    void unknownNamesAndUnfitClassesAreRefusedWithTheReason() {
        assertThatThrownBy(() -> IdleStrategy.named("spin"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown idle strategy spin");
        assertThatThrownBy(() -> IdleStrategy.named("com.example.Missing"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be created");
        assertThatThrownBy(() -> IdleStrategy.named(NotAStrategy.class.getName()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not implement");
    }

    @Test
    void theBrokerConfigKeepsAClassNamesCaseAndRefusesABadOneAtStart() {
        Properties p = new Properties();
        p.setProperty("log.dirs", "/tmp/unused-idle-strategy-test");
        p.setProperty("append.idle.strategy", CountingIdle.class.getName());
        assertThat(BrokerConfig.fromProperties(p).appendIdleStrategy()).isEqualTo(CountingIdle.class.getName());
        p.setProperty("append.idle.strategy", "Park");
        assertThat(BrokerConfig.fromProperties(p).appendIdleStrategy()).isEqualTo("park");
        p.setProperty("append.idle.strategy", NotAStrategy.class.getName());
        assertThatThrownBy(() -> BrokerConfig.fromProperties(p))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("append.idle.strategy");
    }
}
