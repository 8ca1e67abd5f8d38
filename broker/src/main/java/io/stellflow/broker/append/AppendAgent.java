package io.stellflow.broker.append;

import io.stellflow.protocol.Errors;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An append agent: one thread that is the single leader-side writer of the partitions assigned to
 * it. {@link #doWork} first applies the commands that arrived (an appender to poll from now on, or
 * one retired with its partition), then drains each assigned queue once, and returns how much it
 * did; the {@link IdleStrategy} decides what to do when that is 0. Request threads {@link #wake} it
 * after a hand-off, so a parked agent starts at once.
 *
 * <p>Thread-safety: the assigned appenders are confined to the agent thread; other threads reach
 * it only through {@link #command} (a queue) and {@link #wake}. Start and close are idempotent.
 */
final class AppendAgent implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(AppendAgent.class);

    private final String name;
    private final AppendService service;
    private final IdleStrategy idle;

    /**
     * Appenders whose state changed: one not yet assigned is added, a retired one removed (its state
     * says which). Unbounded: one entry per partition created or removed, never per request.
     */
    private final ConcurrentLinkedQueue<PartitionAppender> commands = new ConcurrentLinkedQueue<>();

    /** The queues this agent drains, [0, count); agent thread only. */
    private PartitionAppender[] assigned = new PartitionAppender[8];

    private int count;

    /** {@link #count} as last published by the agent thread (tests and diagnostics). */
    private volatile int polledQueues;

    /** Agent thread: a failed pass was logged with its trace. */
    private boolean passFailureLogged;

    private volatile boolean running;
    private Thread thread;
    private boolean stopped;

    AppendAgent(String name, AppendService service, IdleStrategy idle) {
        this.name = name;
        this.service = service;
        this.idle = idle;
    }

    /**
     * Hands {@code appender} to the agent: to poll from now on, or, once {@link
     * PartitionAppender#retire retired}, to stop polling and answer what is left. Any thread.
     */
    void command(PartitionAppender appender) {
        commands.add(appender);
        wake();
    }

    synchronized void start() {
        if (thread == null && !stopped) {
            running = true;
            thread = new Thread(this, name);
            thread.setDaemon(true);
            thread.start();
        }
    }

    void wake() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Applies the commands, then handles one pass over the assigned queues; returns the work done. */
    int doWork() {
        int work = applyCommands();
        // Indexed over an array: an iterator per pass was the agent's only allocation while idle
        // (ProducePathBench, async-profiler alloc).
        for (int i = 0; i < count; i++) {
            work += assigned[i].drain(service);
        }
        return work;
    }

    /** Queues this agent polls now, as of its last command (tests and diagnostics; any thread). */
    int polledQueues() {
        return polledQueues;
    }

    private int applyCommands() {
        int applied = 0;
        PartitionAppender a;
        while ((a = commands.poll()) != null) {
            applied++;
            if (a.isRetired()) {
                unassign(a);
                a.letGo(service);
            } else {
                if (count == assigned.length) {
                    assigned = Arrays.copyOf(assigned, count * 2);
                }
                assigned[count++] = a;
            }
        }
        if (applied > 0) {
            polledQueues = count;
        }
        return applied;
    }

    private void unassign(PartitionAppender a) {
        for (int i = 0; i < count; i++) {
            if (assigned[i] == a) {
                assigned[i] = assigned[--count];
                assigned[count] = null;
                return;
            }
        }
    }

    @Override
    public void run() {
        while (running) {
            try {
                idle.idle(doWork());
            } catch (Throwable e) {
                // Never the end of the thread: its other partitions' requests would go unanswered.
                // The appenders answer their own failures; what reaches here is a bug of the agent.
                passFailed(e);
            }
        }
        try {
            // Finish what was handed over before close (the request threads have stopped).
            while (doWork() > 0) {
                // drain
            }
        } catch (Throwable e) {
            LOG.error("Append agent {} failed its last pass", name, e);
        }
        letGoOfAll();
    }

    /** Logs a failed pass: the first with its stack trace, later ones at DEBUG (a loop must not flood). */
    private void passFailed(Throwable e) {
        if (!passFailureLogged) {
            passFailureLogged = true;
            LOG.error("Append agent {} failed a pass; it goes on", name, e);
        } else {
            LOG.debug("Append agent {} failed a pass again: {}", name, e.toString());
        }
    }

    /** Retires every assigned appender and answers what it still holds; the agent polls nothing after. */
    private void letGoOfAll() {
        applyCommands();
        for (int i = 0; i < count; i++) {
            PartitionAppender a = assigned[i];
            a.retire(Errors.BROKER_NOT_AVAILABLE);
            a.letGo(service);
            assigned[i] = null;
        }
        count = 0;
        commands.clear();
        polledQueues = 0;
    }

    /**
     * Stops the thread after it finished what is queued and answered what it could not finish;
     * idempotent. An agent never started lets go of its appenders on the calling thread.
     */
    synchronized void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        Thread t = thread;
        if (t == null) {
            letGoOfAll(); // no agent thread ever polled these queues
            return;
        }
        running = false;
        LockSupport.unpark(t);
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.warn("Append agent {} still busy after 10 s; its queues stay with it", name);
        }
    }
}
