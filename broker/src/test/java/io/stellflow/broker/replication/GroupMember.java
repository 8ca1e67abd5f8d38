package io.stellflow.broker.replication;

import io.stellflow.client.AdminGroups;
import io.stellflow.client.ConsumerRebalanceListener;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One member of the checker's consumer group: a {@link StellflowConsumer} with {@code group.id},
 * subscribed to the checked topic, on a thread of its own that polls, reports every record to the
 * {@link GroupLedger} and commits its positions with {@code commitSync} every {@link
 * #COMMIT_INTERVAL_MS} and in {@code onPartitionsRevoked} (no auto commit). The test thread gives it
 * one command at a time:
 *
 * <ul>
 *   <li>{@link Command#LEAVE}: {@code close()}, which leaves the group;
 *   <li>{@link Command#CRASH}: stops polling and drops the consumer without leaving (closed only when
 *       the workload closes, long after its session expired);
 *   <li>{@link Command#PAUSE}: stops polling until the coordinator has evicted it (its member id gone
 *       from DescribeGroups: the session timeout passed), then commits the positions it had: the
 *       commit must be refused with UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH or STALE_MEMBER_EPOCH and
 *       the committed offsets must not go back; then it polls again (and rejoins).
 * </ul>
 *
 * <p>Thread-safety: the consumer is confined to the member's thread; {@link #command}, {@link
 * #memberId} and {@link #owned} from any thread.
 */
final class GroupMember {
    static final long COMMIT_INTERVAL_MS = 500;
    /**
     * How long a paused member waits to be evicted, from the last time DescribeGroups got no answer
     * (10 session timeouts; a coordinator that comes back restarts the sessions it loads).
     */
    static final long EVICTION_TIMEOUT_MS = 20_000;
    /** How long a paused member waits for a DescribeGroups answer at all (every broker restarting). */
    static final long COORDINATOR_TIMEOUT_MS = 90_000;

    enum Command {
        LEAVE,
        CRASH,
        PAUSE
    }

    /** What the member needs of the workload: the group as the coordinator describes it. */
    interface Group {
        /** Whether DescribeGroups lists {@code memberId}; null when the coordinator did not answer. */
        Boolean listed(String memberId);

        /** The group's committed offsets, or null when the coordinator did not answer. */
        Map<TopicPartition, Long> committed(String from);
    }

    final String name;
    private final String topic;
    private final GroupLedger ledger;
    private final Group group;
    private final StellflowConsumer consumer;
    private final AtomicReference<Command> command = new AtomicReference<>();
    private volatile CompletableFuture<String> commandDone = CompletableFuture.completedFuture("none");
    private volatile String memberId;
    private volatile Set<TopicPartition> owned = Set.of();
    private final Set<TopicPartition> ownedByListener = new TreeSet<>(AdminGroups.PARTITION_ORDER);
    private volatile boolean running = true;
    private Thread thread;

    GroupMember(String name, Properties props, String topic, GroupLedger ledger, Group group) {
        this.name = name;
        this.topic = topic;
        this.ledger = ledger;
        this.group = group;
        this.consumer = new StellflowConsumer(props);
    }

    void start() {
        thread = Thread.ofPlatform().name("checker-" + name).daemon(true).start(this::run);
    }

    /** The member id it last had (null before it joined). */
    String memberId() {
        return memberId;
    }

    /** The partitions its listener was last told it owns. */
    Set<TopicPartition> owned() {
        return owned;
    }

    /** Gives the member {@code c}; the future completes with what happened when it is done. */
    CompletableFuture<String> command(Command c) {
        CompletableFuture<String> done = new CompletableFuture<>();
        commandDone = done;
        command.set(c);
        return done;
    }

    private void run() {
        long nextCommitNs = System.nanoTime();
        try {
            consumer.subscribe(List.of(topic), new Listener());
            while (running) {
                Command c = command.getAndSet(null);
                if (c == Command.LEAVE) {
                    consumer.close(Duration.ofSeconds(5));
                    running = false;
                    commandDone.complete(name + " left");
                    return;
                } else if (c == Command.CRASH) {
                    running = false;
                    commandDone.complete(name + " crashed (owned " + owned + ")");
                    return; // the consumer stays open, silent: its session expires
                } else if (c == Command.PAUSE) {
                    commandDone.complete(pause());
                }
                for (ConsumerRecord r : consumer.poll(Duration.ofMillis(100))) {
                    ledger.delivered(r.partition(), r.offset(), new String(r.value(), StandardCharsets.UTF_8), name);
                }
                memberId = consumer.groupMemberId();
                if (System.nanoTime() - nextCommitNs >= 0) {
                    commit();
                    nextCommitNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(COMMIT_INTERVAL_MS);
                }
            }
        } catch (RuntimeException e) {
            if (running) {
                ledger.ledger().violation("GROUP_MEMBER_FAILED", -1, name + ": " + e);
            }
        } finally {
            commandDone.complete(name + " stopped");
        }
    }

    /** Commits the positions of the owned partitions; a refusal is counted, not fatal. */
    private void commit() {
        try {
            consumer.commitSync(Duration.ofSeconds(3));
            ledger.commitsOk.incrementAndGet();
        } catch (StellflowException e) {
            if (fencing(e.errorCode())) {
                ledger.commitsFenced.incrementAndGet();
            } else {
                ledger.commitsFailed.incrementAndGet();
            }
        }
    }

    static boolean fencing(short code) {
        return code == Errors.UNKNOWN_MEMBER_ID
                || code == Errors.FENCED_MEMBER_EPOCH
                || code == Errors.STALE_MEMBER_EPOCH;
    }

    /**
     * Stops polling until evicted, then checks that a commit of the positions it had is refused and
     * moves no committed offset back.
     */
    private String pause() {
        String id = memberId;
        Map<TopicPartition, Long> positions = new LinkedHashMap<>();
        for (TopicPartition tp : ownedByListener) {
            positions.put(tp, consumer.position(tp));
        }
        long startNs = System.nanoTime();
        long deadlineNs = startNs + TimeUnit.MILLISECONDS.toNanos(COORDINATOR_TIMEOUT_MS);
        long hardDeadlineNs = deadlineNs;
        boolean answered = false;
        for (Boolean listed = group.listed(id); !Boolean.FALSE.equals(listed); listed = group.listed(id)) {
            if (listed == null) {
                answered = false; // the coordinator is down or moving: the eviction clock starts again
                deadlineNs = hardDeadlineNs;
            } else if (!answered) {
                answered = true;
                deadlineNs = Math.min(
                        hardDeadlineNs, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EVICTION_TIMEOUT_MS));
            }
            if (System.nanoTime() - deadlineNs > 0) {
                ledger.ledger()
                        .violation(
                                "GROUP_NOT_EVICTED",
                                -1,
                                name + " (" + id + ") stopped polling "
                                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) + " ms ago and is "
                                        + (answered ? "still a member" : "the coordinator never answered"));
                return name + " paused, not evicted";
            }
            sleep(100);
        }
        long evictedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        if (positions.isEmpty()) {
            return name + " paused " + evictedMs + " ms until evicted (owned nothing)";
        }
        // Let the partitions' new owners commit past the stale positions, so an accepted stale
        // commit would show as a committed offset moving back.
        long progressDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - progressDeadlineNs < 0 && !passed(positions)) {
            sleep(50);
        }
        boolean passed = passed(positions);
        Map<TopicPartition, Long> before = group.committed(name + " before its stale commit");
        String outcome;
        try {
            consumer.commitSync(positions, Duration.ofSeconds(10));
            outcome = "ACCEPTED";
            ledger.ledger()
                    .violation(
                            "EVICTED_COMMIT_ACCEPTED",
                            positions.keySet().iterator().next().partition(),
                            name + " (" + id + ") was evicted " + evictedMs + " ms after it stopped polling, yet its"
                                    + " commit of " + positions + " was accepted");
        } catch (StellflowException e) {
            outcome = Errors.name(e.errorCode());
            if (fencing(e.errorCode())) {
                ledger.evictedCommitsRefused.incrementAndGet();
            } else {
                ledger.evictedCommitsInconclusive.incrementAndGet();
            }
        }
        Map<TopicPartition, Long> after = group.committed(name + " after its stale commit");
        if (before != null && after != null) {
            before.forEach((tp, offset) -> {
                long now = after.getOrDefault(tp, -1L);
                if (now < offset) {
                    ledger.ledger()
                            .violation(
                                    "EVICTED_COMMIT_APPLIED",
                                    tp.partition(),
                                    name + "'s stale commit " + positions + " moved " + tp + " from " + offset + " to "
                                            + now);
                }
            });
        }
        return name + " paused " + evictedMs + " ms until evicted, stale commit " + positions + " -> " + outcome
                + (passed ? " (owners had passed it)" : "");
    }

    /** Whether the group's committed offset of every partition in {@code positions} is above it. */
    private boolean passed(Map<TopicPartition, Long> positions) {
        for (Map.Entry<TopicPartition, Long> e : positions.entrySet()) {
            if (ledger.maxCommitted(e.getKey().partition()) <= e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private Map<TopicPartition, Long> positionsOf(Collection<TopicPartition> partitions) {
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            out.put(tp, consumer.position(tp));
        }
        return out;
    }

    /** Records the listener's view of what the member owns; commits before a revocation. */
    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            System.out.println("GROUP_MEMBER " + name + " (" + memberId + ") revoking " + partitions + " at "
                    + positionsOf(partitions));
            commit();
            ownedByListener.removeAll(partitions);
            owned = Set.copyOf(ownedByListener);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            System.out.println("GROUP_MEMBER " + name + " (" + consumer.groupMemberId() + ") assigned " + partitions
                    + " at " + positionsOf(partitions));
            ownedByListener.addAll(partitions);
            owned = Set.copyOf(ownedByListener);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            System.out.println("GROUP_MEMBER " + name + " (" + memberId + ") lost " + partitions);
            ownedByListener.removeAll(partitions); // no commit: another member may own them now
            owned = Set.copyOf(ownedByListener);
        }
    }

    /** Stops the thread (if running) and closes the consumer, leaving the group if still in it. */
    void close() throws InterruptedException {
        running = false;
        if (thread != null) {
            thread.join(15_000);
        }
        consumer.close(Duration.ofSeconds(3));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
