package io.stellflow.broker.append;

import io.stellflow.broker.watchdog.Heartbeat;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.CompressedRecordsValidator;
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
 * <p>Watched ({@link ThreadWatchdog}): the loop beats its {@link Heartbeat} once per pass (one
 * volatile store). A thread that ended while the agent is open is replaced by {@link #restart}: a new
 * thread that continues with the same assigned appenders and queues. While the watchdog finds the
 * thread stuck, {@link #refusing} is true and {@link AppendService#submit} queues nothing for it.
 *
 * <p>Thread-safety: the assigned appenders are confined to the agent thread (a restarted thread
 * takes them over after the old one ended: its end happens-before the watchdog's restart); other
 * threads reach it only through {@link #command} (a queue) and {@link #wake}. Start, restart and
 * close are idempotent and exclusive.
 */
final class AppendAgent implements Runnable, ThreadWatchdog.Owner {
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
    /** Written under this agent's monitor; read lock-free by {@link #wake}. */
    private volatile Thread thread;
    /** Written under this agent's monitor; read lock-free by the watchdog ({@link #closed}). */
    private volatile boolean stopped;

    private final Heartbeat heartbeat;

    /** Set by the watchdog while the thread is stuck: {@link AppendService#submit} refuses. */
    private volatile boolean refusing;

    /** Test seam ({@link #endThreadForTest}): the loop returns as if the thread had died. */
    private volatile boolean endForTest;

    /**
     * Step 7 of compressed batches for every partition of this agent: one decompressor per codec, one
     * 128 KiB chunk and, once zstd batches of ours come, one region of up to 8 MiB, reused. Agent
     * thread only (a restarted thread takes it over once the old one ended); closed by the thread's
     * last pass.
     */
    private final CompressedRecordsValidator compressedValidator;

    /** Recompression for topics whose compression.type is not producer; agent thread only, as the validator. */
    private final CompressionRewriter compressionRewriter;

    AppendAgent(String name, AppendService service, IdleStrategy idle) {
        this.name = name;
        this.service = service;
        this.idle = idle;
        this.compressedValidator = new CompressedRecordsValidator(
                service.compressionMaxDecompressedBytes(), service.metrics().compression());
        this.compressionRewriter = new CompressionRewriter(
                service.compressionMaxDecompressedBytes(), service.metrics().compression());
        this.heartbeat = new Heartbeat(name, "AppendService", System::nanoTime);
    }

    /** The service this agent works for. */
    AppendService service() {
        return service;
    }

    /** The compressed-batch validator of this agent's thread ({@link PartitionAppender#drain}). */
    CompressedRecordsValidator compressedValidator() {
        return compressedValidator;
    }

    /** The recompression of this agent's thread ({@link PartitionAppender#drain}). */
    CompressionRewriter compressionRewriter() {
        return compressionRewriter;
    }

    /** This agent's heartbeat, beaten once per pass. */
    Heartbeat heartbeat() {
        return heartbeat;
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
            startThread();
        }
    }

    private void startThread() {
        running = true;
        Thread t = new Thread(this, name);
        t.setDaemon(true);
        heartbeat.attach(t);
        thread = t;
        t.start();
    }

    /**
     * The watchdog found the thread ended while this agent is open: a new thread continues with the
     * same assigned appenders, commands and queues (nothing queued is lost or answered twice; a pass
     * the old thread did not finish leaves its appender to answer its own failure). Returns false
     * when the agent was closed meanwhile (nothing to restart). Watchdog thread.
     */
    @Override
    public synchronized boolean restart() {
        if (stopped) {
            return false;
        }
        Thread t = thread;
        if (t != null && t.isAlive()) {
            return true; // already running (restarted by an earlier call)
        }
        endForTest = false;
        startThread();
        LOG.warn("Append agent {} restarted on a new thread with {} queues", name, polledQueues);
        return true;
    }

    /** Whether {@link #close} was called: the thread ends on purpose. */
    @Override
    public boolean closed() {
        return stopped;
    }

    /** The watchdog found the thread stuck ({@code true}) or moving again. */
    @Override
    public void stuck(boolean stuck) {
        refusing = stuck;
    }

    /** Whether new appends to this agent's partitions are refused (its thread is stuck). Any thread. */
    boolean refusing() {
        return refusing;
    }

    /**
     * Test seam: makes the loop return after its current pass as if the thread had died (no last
     * drain, no answers, the appenders stay assigned), the case the watchdog restarts. Tests only.
     */
    void endThreadForTest() {
        endForTest = true;
        running = false;
        wake();
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
            heartbeat.beat();
            try {
                idle.idle(doWork());
            } catch (Throwable e) {
                // Never the end of the thread: its other partitions' requests would go unanswered.
                // The appenders answer their own failures; what reaches here is a bug of the agent.
                passFailed(e);
            }
        }
        if (endForTest) {
            return; // as if the thread had died: nothing drained or answered
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
        compressedValidator.close(); // closed on purpose: no later pass uses it
        compressionRewriter.close();
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
        } else {
            // A thread that ended without letting go (it died and was not restarted yet) leaves its
            // queues unanswered: answer them here (its end happens-before this join). After a normal
            // end this finds nothing (letting go is idempotent).
            letGoOfAll();
        }
    }
}
