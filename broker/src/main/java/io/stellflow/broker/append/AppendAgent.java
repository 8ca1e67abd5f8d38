package io.stellflow.broker.append;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An append agent: one thread that is the single writer of the partitions assigned to it. {@link
 * #doWork} drains each of its partitions' queues once and returns how many requests it handled; the
 * {@link IdleStrategy} decides what to do when that is 0. Request threads {@link #wake} it after a
 * hand-off, so a parked agent starts at once.
 *
 * <p>Thread-safety: {@link #assign}, {@link #wake}, {@link #start} and {@link #close} from any thread;
 * {@link #doWork} runs on the agent thread only. Start and close are idempotent.
 */
final class AppendAgent implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(AppendAgent.class);

    private final String name;
    private final AppendService service;
    private final IdleStrategy idle;
    private final CopyOnWriteArrayList<PartitionAppender> partitions = new CopyOnWriteArrayList<>();
    private volatile boolean running;
    private Thread thread;

    AppendAgent(String name, AppendService service, IdleStrategy idle) {
        this.name = name;
        this.service = service;
        this.idle = idle;
    }

    void assign(PartitionAppender appender) {
        partitions.add(appender);
    }

    synchronized void start() {
        if (thread == null) {
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

    /** Handles one pass over the assigned partitions; returns the requests handled. */
    int doWork() {
        int work = 0;
        // Indexed, not for-each: an iterator per pass was the agent's only allocation while idle
        // (ProducePathBench, async-profiler alloc); get(i) reads the current array without copying.
        for (int i = 0, n = partitions.size(); i < n; i++) {
            work += partitions.get(i).drain(service);
        }
        return work;
    }

    @Override
    public void run() {
        while (running) {
            try {
                idle.idle(doWork());
            } catch (RuntimeException e) {
                LOG.error("Append agent {} failed a pass", name, e);
            }
        }
        // Finish what was handed over before close (the request threads have stopped).
        while (doWork() > 0) {
            // drain
        }
    }

    /** Stops the thread after it finished what is queued; idempotent. */
    synchronized void close() {
        Thread t = thread;
        if (t == null || !running) {
            return;
        }
        running = false;
        LockSupport.unpark(t);
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (PartitionAppender p : partitions) {
            p.failAll(service);
        }
    }
}
