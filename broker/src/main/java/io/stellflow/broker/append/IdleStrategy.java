package io.stellflow.broker.append;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What an agent does after a {@code doWork()} pass: nothing when it did work, else back off. Every
 * implementation ends in {@link LockSupport#parkNanos}, never in a pure spin, because this broker
 * shares a 2-core machine with its clients: a spinning agent would take a core from them. A parked
 * agent is woken early by {@link LockSupport#unpark} when work is handed to it.
 *
 * <p>Thread-safety: one instance per agent thread (implementations keep backoff state).
 */
public interface IdleStrategy {
    /**
     * Longest park, ms. Only a safety net: every hand-off unparks the agent, and {@link
     * LockSupport}'s permit makes an unpark between the agent's last empty pass and its park end
     * that park at once. Each timed-out park is a wake-up with nothing to do; at 1 ms (the value
     * until 2026-12-01) an idle or lightly loaded agent woke 1,000 times a second, and parking was
     * 5.3% of the broker's CPU samples while producing 1 KiB records
     * (the CPU profile of perf run 20261201T163413Z, commit d8a1e0a; its collapsed stacks are in git
     * history, not in the tree).
     */
    long MAX_PARK_MS = 100;

    /** Called after each work pass with the amount of work done (0 = idle). */
    void idle(int workCount);

    /** Forget the backoff state (after work arrived). */
    void reset();

    /**
     * {@code append.idle.strategy}: {@code park} (park at once, up to {@value #MAX_PARK_MS} ms; the
     * hand-off unparks), {@code backoff} (100 spins, 10 yields, then parks from 1 us doubling to
     * {@value #MAX_PARK_MS} ms), or the fully qualified name of a class implementing this interface
     * with a public no-argument constructor (one instance per agent; it must not spin without end,
     * see above).
     *
     * @throws IllegalArgumentException for an unknown name, or a class that cannot be loaded, does not
     *     implement {@code IdleStrategy} or has no public no-argument constructor
     */
    static IdleStrategy named(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "park" -> new Park(TimeUnit.MILLISECONDS.toNanos(MAX_PARK_MS));
            case "backoff" ->
                new Backoff(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(MAX_PARK_MS));
            default -> {
                if (!name.contains(".")) {
                    throw new IllegalArgumentException(
                            "unknown idle strategy " + name + " (park, backoff or a class name)");
                }
                yield instantiate(name);
            }
        };
    }

    private static IdleStrategy instantiate(String className) {
        try {
            Class<?> type = Class.forName(className, true, IdleStrategy.class.getClassLoader());
            if (!IdleStrategy.class.isAssignableFrom(type)) {
                throw new IllegalArgumentException(className + " does not implement " + IdleStrategy.class.getName());
            }
            return (IdleStrategy) type.getConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new IllegalArgumentException("idle strategy class " + className + " cannot be created: " + e, e);
        }
    }

    /** Parks for {@code parkNs} whenever idle. */
    final class Park implements IdleStrategy {
        private final long parkNs;

        /** @param parkNs longest sleep when nothing wakes the agent */
        public Park(long parkNs) {
            this.parkNs = parkNs;
        }

        @Override
        public void idle(int workCount) {
            if (workCount == 0) {
                LockSupport.parkNanos(parkNs);
            }
        }

        @Override
        public void reset() {}
    }

    /** Spins, then yields, then parks with a doubling period up to {@code maxParkNs}. */
    final class Backoff implements IdleStrategy {
        private final int maxSpins;
        private final int maxYields;
        private final long minParkNs;
        private final long maxParkNs;
        private int spins;
        private int yields;
        private long parkNs;

        /**
         * @param maxSpins idle passes that spin
         * @param maxYields idle passes that yield after the spins
         * @param minParkNs first park period
         * @param maxParkNs longest park period
         */
        public Backoff(int maxSpins, int maxYields, long minParkNs, long maxParkNs) {
            this.maxSpins = maxSpins;
            this.maxYields = maxYields;
            this.minParkNs = minParkNs;
            this.maxParkNs = maxParkNs;
            this.parkNs = minParkNs;
        }

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                reset();
            } else if (spins < maxSpins) {
                spins++;
                Thread.onSpinWait();
            } else if (yields < maxYields) {
                yields++;
                Thread.yield();
            } else {
                LockSupport.parkNanos(parkNs);
                parkNs = Math.min(parkNs * 2, maxParkNs);
            }
        }

        @Override
        public void reset() {
            spins = 0;
            yields = 0;
            parkNs = minParkNs;
        }
    }
}
