package io.stellflow.perf.groups;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * One group member of a {@link GroupBench} case: a thread that builds its {@link GroupClient},
 * waits for the start gate, subscribes, then polls (or commits, in the commit case) until told to
 * leave or stop. Its listener keeps the set of partitions it owns and the {@link System#nanoTime()}
 * at which that set last changed, which the driver reads to time rebalances.
 *
 * <p>Thread-safety: the client, the listener and the commit figures belong to the member thread;
 * the driver reads {@link #state()}, the time stamps and {@link #failure()} (volatile), sets the
 * phase flags, and reads the commit figures only after {@link #awaitExit}.
 */
final class GroupMember implements GroupClient.Listener {
    /** What the member owns now and since when ({@code changedNs} 0: never changed). Immutable. */
    record State(Set<Integer> owned, long changedNs) {}

    /** Polls between commits at least this often, so that a client that heartbeats from poll stays in. */
    private static final long COMMIT_POLL_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(50);
    /** Highest commit latency recorded: one hour in microseconds (HdrHistogram, 3 significant digits). */
    private static final long MAX_LATENCY_US = TimeUnit.HOURS.toMicros(1);

    private final String topic;
    private final long pollMs;
    private final Supplier<GroupClient> clientFactory;
    private final CountDownLatch ready = new CountDownLatch(1);
    private final CountDownLatch subscribed = new CountDownLatch(1);
    private final CountDownLatch startGate;
    private final Thread thread;

    private volatile State state = new State(Set.of(), 0);
    private volatile long subscribeNs = -1;
    private volatile long closeNs = -1;
    private volatile boolean leaveRequested;
    private volatile boolean stopRequested;
    private volatile boolean committing;
    private volatile boolean recording;
    private volatile Throwable failure;

    // Member thread only; read by the driver after awaitExit.
    private final Histogram commitLatencyUs = new Histogram(MAX_LATENCY_US, 3);
    private long commits;
    private long commitErrors;

    GroupMember(String name, String topic, long pollMs, Supplier<GroupClient> clientFactory, CountDownLatch startGate) {
        this.topic = topic;
        this.pollMs = pollMs;
        this.clientFactory = clientFactory;
        this.startGate = startGate;
        this.thread = Thread.ofPlatform().name(name).daemon().unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    private void run() {
        GroupClient client = null;
        try {
            client = clientFactory.get();
            ready.countDown();
            startGate.await();
            subscribeNs = System.nanoTime();
            client.subscribe(topic, this);
            subscribed.countDown();
            long offset = 0;
            long nextPollNs = 0;
            while (!leaveRequested && !stopRequested) {
                if (committing && !state.owned().isEmpty()) {
                    for (int p : state.owned()) {
                        long t0 = System.nanoTime();
                        boolean ok = client.commitSync(topic, p, ++offset);
                        long t1 = System.nanoTime();
                        if (recording) {
                            commitLatencyUs.recordValue(Math.min((t1 - t0) / 1000, MAX_LATENCY_US));
                            if (ok) {
                                commits++;
                            } else {
                                commitErrors++;
                            }
                        }
                        if (t1 >= nextPollNs) {
                            client.poll(0);
                            nextPollNs = t1 + COMMIT_POLL_INTERVAL_NS;
                        }
                    }
                } else {
                    client.poll(pollMs);
                }
            }
            if (leaveRequested) {
                closeNs = System.nanoTime();
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            ready.countDown();
            subscribed.countDown();
            if (client != null) {
                try {
                    client.close();
                } catch (RuntimeException e) {
                    if (failure == null && !stopRequested) {
                        failure = e;
                    }
                }
            }
        }
    }

    @Override
    public void revoked(Collection<Integer> partitions) {
        Set<Integer> next = new HashSet<>(state.owned());
        next.removeAll(partitions);
        state = new State(Set.copyOf(next), System.nanoTime());
    }

    @Override
    public void assigned(Collection<Integer> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        Set<Integer> next = new HashSet<>(state.owned());
        next.addAll(partitions);
        state = new State(Set.copyOf(next), System.nanoTime());
    }

    State state() {
        return state;
    }

    /** The instant just before this member called subscribe, or -1 before it did. */
    long subscribeNs() {
        return subscribeNs;
    }

    /** The instant just before this member called close after {@link #leave()}, or -1. */
    long closeNs() {
        return closeNs;
    }

    Throwable failure() {
        return failure;
    }

    boolean awaitReady(long timeoutMs) throws InterruptedException {
        return ready.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    boolean awaitSubscribed(long timeoutMs) throws InterruptedException {
        return subscribed.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** Asks the member to leave the group: it closes its client (which leaves) on its own thread. */
    void leave() {
        leaveRequested = true;
    }

    /** Asks the member to stop and close, untimed (the end of a case). */
    void stop() {
        stopRequested = true;
    }

    void committing(boolean on) {
        committing = on;
    }

    void recording(boolean on) {
        recording = on;
    }

    /** Waits for the member thread to end; false when it did not within the time. */
    boolean awaitExit(long timeoutMs) throws InterruptedException {
        return thread.join(java.time.Duration.ofMillis(timeoutMs));
    }

    Histogram commitLatencyUs() {
        return commitLatencyUs;
    }

    long commits() {
        return commits;
    }

    long commitErrors() {
        return commitErrors;
    }
}
