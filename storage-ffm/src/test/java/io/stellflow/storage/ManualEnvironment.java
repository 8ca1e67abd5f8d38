package io.stellflow.storage;

import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;

/** A {@link LogEnvironment} whose clock and scheduler the test drives. Not thread-safe. */
final class ManualEnvironment {
    private long nowMs;
    private final List<Object[]> tasks = new ArrayList<>();

    ManualEnvironment(long startMs) {
        this.nowMs = startMs;
    }

    LogEnvironment environment() {
        InstantSource clock = () -> Instant.ofEpochMilli(nowMs);
        return new LogEnvironment(clock, (task, delayMs) -> tasks.add(new Object[] {nowMs + delayMs, task}));
    }

    long nowMs() {
        return nowMs;
    }

    /** Moves the clock and runs the tasks that are due. */
    void advance(long ms) {
        nowMs += ms;
        List<Object[]> due = new ArrayList<>();
        for (Object[] t : tasks) {
            if ((long) t[0] <= nowMs) {
                due.add(t);
            }
        }
        tasks.removeAll(due);
        for (Object[] t : due) {
            ((Runnable) t[1]).run();
        }
    }

    int pendingTasks() {
        return tasks.size();
    }
}
