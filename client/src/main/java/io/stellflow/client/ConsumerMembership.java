package io.stellflow.client;

import io.stellflow.protocol.Errors;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer's side of its group ({@code group.id}) in our group protocol (ConsumerGroupHeartbeat,
 * key 20, the KIP-848 model: the coordinator computes the assignment, the member reconciles), and its
 * offset commits and lookups (OffsetCommit v1, fenced by member epoch, and OffsetFetch v1).
 *
 * <p>Membership: {@link #subscribe} joins with epoch 0 (no member id: the coordinator gives one);
 * each answer sets the member id, the member epoch and the heartbeat interval (the broker's), and may
 * carry the member's full target assignment. Reconciling a target (one at a time; a newer target
 * waits for the current one) runs these steps in order: commit the positions of the partitions to
 * revoke ({@code enable.auto.commit}), {@link ConsumerRebalanceListener#onPartitionsRevoked}, stop
 * fetching them, OffsetFetch the committed offsets of the added partitions, start fetching them,
 * {@link ConsumerRebalanceListener#onPartitionsAssigned}, and then a heartbeat at once with the
 * owned partitions, which acknowledges the revocation. A blocking call made by a listener method
 * ({@code commitSync} in {@code onPartitionsRevoked}) runs {@link #poll} without any reconciliation
 * step: the reconciliation goes on once the listener returned. FENCED_MEMBER_EPOCH, STALE_MEMBER_EPOCH or
 * UNKNOWN_MEMBER_ID drops every partition ({@link ConsumerRebalanceListener#onPartitionsLost}, no
 * commit) and rejoins with epoch 0. NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and lost connections
 * send the member to {@link CoordinatorLocator} (FindCoordinator with a bounded exponential
 * back-off); the member keeps its epoch and partitions meanwhile. Other heartbeat codes
 * (UNRELEASED_INSTANCE_ID, UNSUPPORTED_ASSIGNOR, GROUP_MAX_SIZE_REACHED, authorization ...) are fatal:
 * the partitions are lost and every later {@link #poll} throws.
 *
 * <p>Commits: sent with the current member id and epoch (memberId null and epoch -1 while not
 * subscribed: a commit from outside the group, for {@code assign} with a {@code group.id}). A sync
 * commit is retried after coordinator errors until its deadline; an async one is sent once (a retry
 * could land after a newer commit). Auto commit sends every position that changed each {@code
 * auto.commit.interval.ms} while the member holds an epoch.
 *
 * <p>Time: nothing here reads a clock or blocks; the owner calls {@link #poll} with the time ({@code
 * nowMs}, any monotonic millisecond clock) whenever the {@code wakeup} it gave runs (a response
 * arrived) or {@link #timeToNextEventMs} has passed. Responses are only looked at from {@link #poll}.
 *
 * <p>Thread-safety: confined to the consumer's application thread (the owner thread); futures
 * complete on the I/O thread and only run {@code wakeup} there.
 */
final class ConsumerMembership {
    private static final Logger LOG = LoggerFactory.getLogger(ConsumerMembership.class);

    /** Member epoch sent to leave the group. */
    static final int LEAVE_EPOCH = -1;
    /** Member epoch a static member sends to leave for a restart (its assignment is kept). */
    static final int STATIC_LEAVE_EPOCH = -2;

    /** Where the member is in its life. */
    enum State {
        /** Not subscribed: commits and fetches only, from outside the group. */
        UNSUBSCRIBED,
        /** Subscribed, no epoch yet (joining or rejoining with epoch 0). */
        JOINING,
        /** Has an epoch; reconciles whatever target the coordinator sends. */
        MEMBER,
        /** Revoking everything, then sending the leave heartbeat. */
        LEAVING,
        /** A heartbeat failed with a code that retrying cannot fix; see {@link #poll}. */
        FAILED
    }

    private final ConsumerConfig config;
    private final String groupId;
    private final GroupTransport transport;
    private final PartitionOwner owner;
    private final CoordinatorLocator locator;
    private final Runnable wakeup;

    private State state = State.UNSUBSCRIBED;
    private ConsumerRebalanceListener listener = ConsumerRebalanceListener.NONE;
    private List<String> subscription = List.of();
    private String memberId;
    private int memberEpoch = -1;
    private int heartbeatIntervalMs;
    private long nextHeartbeatMs;

    /** Partitions this member holds now (fetching them); in assignment order. */
    private final Set<TopicPartition> owned = new LinkedHashSet<>();
    /** The last assignment the coordinator sent; null before the first. */
    private Set<TopicPartition> target;

    private Reconciliation reconciliation;
    private boolean ackPending;
    private CompletableFuture<GroupTransport.HeartbeatReply> heartbeat;
    private GroupTransport.HeartbeatCall heartbeatSent;
    /** What the coordinator has acknowledged; null: send the field in full next time. */
    private List<String> ackedSubscription;

    private Set<TopicPartition> ackedOwned;
    private CompletableFuture<Void> leaveResult;
    private StellflowException fatal;
    /** What a listener threw, or an OffsetFetch error of a reconciliation: thrown once by {@link #poll}. */
    private RuntimeException deferredError;

    private final CoordinatorCalls calls;
    private long nextAutoCommitMs = Long.MAX_VALUE;
    /** True while a {@link ConsumerRebalanceListener} method runs: no reconciliation step then. */
    private boolean inListener;

    private CompletableFuture<Map<TopicPartition, Short>> autoCommit;
    private final Map<TopicPartition, Long> lastCommitted = new LinkedHashMap<>();

    /**
     * @param config the consumer's settings; {@code config.groupId()} must be set
     * @param wakeup run on any thread when a response arrives, so the owner calls {@link #poll}
     */
    ConsumerMembership(ConsumerConfig config, GroupTransport transport, PartitionOwner owner, Runnable wakeup) {
        if (config.groupId() == null) {
            throw new IllegalArgumentException("a group member needs group.id");
        }
        this.config = config;
        this.groupId = config.groupId();
        this.transport = transport;
        this.owner = owner;
        this.wakeup = wakeup;
        this.locator = new CoordinatorLocator(transport, groupId, config.common(), wakeup);
        this.calls = new CoordinatorCalls(
                groupId, locator, config.common(), wakeup, () -> "member " + memberId + " epoch " + memberEpoch);
    }

    State state() {
        return state;
    }

    String memberId() {
        return memberId;
    }

    int memberEpoch() {
        return memberEpoch;
    }

    /** The partitions the member holds now, in assignment order (a copy). */
    Set<TopicPartition> owned() {
        return new LinkedHashSet<>(owned);
    }

    CoordinatorLocator locator() {
        return locator;
    }

    /**
     * Joins the group (or changes the subscription of a member: the next heartbeat carries it at once).
     *
     * @throws IllegalStateException while leaving or after a fatal error
     */
    void subscribe(Collection<String> topics, ConsumerRebalanceListener listener, long nowMs) {
        if (state == State.LEAVING || state == State.FAILED) {
            throw new IllegalStateException("group member of " + groupId + " is " + state);
        }
        this.subscription = List.copyOf(new LinkedHashSet<>(topics));
        this.listener = listener == null ? ConsumerRebalanceListener.NONE : listener;
        if (state == State.UNSUBSCRIBED) {
            state = State.JOINING;
            memberId = null;
            memberEpoch = 0;
            resetAcked();
        }
        nextHeartbeatMs = nowMs;
        if (config.enableAutoCommit()) {
            nextAutoCommitMs = nowMs + config.autoCommitIntervalMs();
        }
    }

    /**
     * Starts leaving: the owned partitions are revoked as in a reconciliation (their positions
     * committed first with auto commit, then the listener), then the leave heartbeat goes out (epoch
     * -1, a static member -2). The result completes when the coordinator answered it (or at once when
     * not subscribed); the owner waits for it as long as it likes, then {@link #reset}s.
     */
    CompletableFuture<Void> leave(long nowMs) {
        if (state == State.UNSUBSCRIBED) {
            return CompletableFuture.completedFuture(null);
        }
        if (leaveResult != null) {
            return leaveResult;
        }
        leaveResult = new CompletableFuture<>();
        if (state == State.FAILED || state == State.JOINING && memberId == null) {
            // Never got an epoch (or already dropped): nothing to revoke, nobody to tell.
            loseAll("leaving");
            reset();
            return CompletableFuture.completedFuture(null);
        }
        state = State.LEAVING;
        reconciliation = new Reconciliation(Set.of(), true);
        target = null;
        poll(nowMs);
        return leaveResult;
    }

    /** Forgets the membership without telling the coordinator (after {@link #leave}, or on close). */
    void reset() {
        if (leaveResult != null) {
            leaveResult.complete(null);
            leaveResult = null;
        }
        state = State.UNSUBSCRIBED;
        memberId = null;
        memberEpoch = -1;
        reconciliation = null;
        heartbeat = null;
        target = null;
        ackPending = false;
        nextAutoCommitMs = Long.MAX_VALUE;
        fatal = null;
        resetAcked();
    }

    /**
     * Queues a commit of {@code offsets} (the next offset to read per partition).
     *
     * @param retry whether coordinator errors are retried (sync commits) until {@code deadlineMs}
     * @param callback run on the owner thread when it ends, or null
     * @return completes (in {@link #poll}) when committed, or fails with a {@link StellflowException}
     */
    CompletableFuture<Void> commit(
            Map<TopicPartition, Long> offsets, boolean retry, long deadlineMs, OffsetCommitCallback callback) {
        Map<TopicPartition, Long> copy = Map.copyOf(offsets);
        CompletableFuture<Void> done = commitCall(copy, retry, deadlineMs).handle((codes, err) -> {
            Exception e = err == null ? null : (Exception) NetworkClient.unwrap(err);
            if (e == null) {
                lastCommitted.putAll(copy);
            }
            if (callback != null) {
                callback.onComplete(copy, e);
            }
            if (e != null) {
                throw e instanceof RuntimeException re ? re : new CompletionException(e);
            }
            return null;
        });
        return done;
    }

    /**
     * Queues an OffsetFetch of {@code partitions}, retried after coordinator errors until {@code
     * deadlineMs}: each partition's committed offset, -1 for none.
     */
    CompletableFuture<Map<TopicPartition, Long>> fetchCommitted(Set<TopicPartition> partitions, long deadlineMs) {
        Set<TopicPartition> copy = Set.copyOf(partitions);
        return calls.add(
                "OffsetFetch", c -> transport.fetchOffsets(c, groupId, copy), r -> Errors.NONE, true, deadlineMs);
    }

    /** Milliseconds until {@link #poll} has something to do without a response arriving (>= 0). */
    long timeToNextEventMs(long nowMs) {
        long next = Math.min(needsCoordinator() ? locator.nextLookupMs(nowMs) : Long.MAX_VALUE, nextAutoCommitMs);
        boolean known = locator.known();
        if (known && state != State.UNSUBSCRIBED && state != State.FAILED && heartbeat == null) {
            next = Math.min(next, ackPending ? nowMs : nextHeartbeatMs);
        }
        next = Math.min(next, calls.nextEventMs(nowMs, known));
        return Math.max(0, next - nowMs);
    }

    /**
     * Does whatever is due: coordinator lookup, responses, reconciliation steps and listener calls,
     * auto commit, the heartbeat, queued commits and fetches.
     *
     * @throws StellflowException after a fatal group error (on every call until {@link #reset}), or
     *     when FindCoordinator fails for good
     * @throws RuntimeException what a {@link ConsumerRebalanceListener} threw, once
     */
    void poll(long nowMs) {
        if (fatal != null) {
            throw fatal;
        }
        HostPort coordinator = needsCoordinator() ? locator.coordinator(nowMs) : null;
        handleHeartbeatReply(nowMs);
        calls.handle(nowMs);
        reconcile(nowMs);
        maybeAutoCommit(nowMs);
        coordinator = needsCoordinator() ? locator.coordinator(nowMs) : null;
        if (coordinator != null) {
            maybeHeartbeat(coordinator, nowMs);
            calls.send(coordinator, nowMs);
        } else {
            calls.failExpired(nowMs);
        }
        if (fatal != null) {
            throw fatal;
        }
        RuntimeException e = deferredError;
        if (e != null) {
            deferredError = null;
            throw e;
        }
    }

    /** True while the member or a queued call needs the coordinator (no lookup for a consumer at rest). */
    private boolean needsCoordinator() {
        return state != State.UNSUBSCRIBED && state != State.FAILED || calls.pending();
    }

    // ---- heartbeat ------------------------------------------------------------------------------

    private void maybeHeartbeat(HostPort coordinator, long nowMs) {
        if (heartbeat != null || state == State.UNSUBSCRIBED || state == State.FAILED) {
            return;
        }
        GroupTransport.HeartbeatCall call;
        if (state == State.LEAVING) {
            if (reconciliation != null) {
                return; // still revoking
            }
            int epoch = config.groupInstanceId() != null ? STATIC_LEAVE_EPOCH : LEAVE_EPOCH;
            call = new GroupTransport.HeartbeatCall(
                    groupId, memberId, epoch, config.groupInstanceId(), -1, null, null, null);
        } else {
            if (!ackPending && nowMs - nextHeartbeatMs < 0) {
                return;
            }
            boolean joining = memberEpoch == 0;
            Set<TopicPartition> ownedNow = Set.copyOf(owned);
            call = new GroupTransport.HeartbeatCall(
                    groupId,
                    memberId,
                    memberEpoch,
                    config.groupInstanceId(),
                    joining ? config.maxPollIntervalMs() : -1,
                    joining || !subscription.equals(ackedSubscription) ? subscription : null,
                    joining ? config.groupRemoteAssignor() : null,
                    joining || !ownedNow.equals(ackedOwned) ? ownedNow : null);
        }
        ackPending = false;
        heartbeatSent = call;
        heartbeat = transport.heartbeat(coordinator, call);
        heartbeat.whenComplete((r, e) -> wakeup.run());
        if (heartbeat.isDone()) {
            handleHeartbeatReply(nowMs);
        }
    }

    private void handleHeartbeatReply(long nowMs) {
        if (heartbeat == null || !heartbeat.isDone()) {
            return;
        }
        CompletableFuture<GroupTransport.HeartbeatReply> done = heartbeat;
        GroupTransport.HeartbeatCall sent = heartbeatSent;
        heartbeat = null;
        heartbeatSent = null;
        GroupTransport.HeartbeatReply reply;
        short code;
        String message;
        try {
            reply = done.join();
            code = reply.errorCode();
            message = reply.errorMessage();
        } catch (CompletionException e) {
            reply = null;
            code = CoordinatorCalls.errorCode(e.getCause());
            message = e.getCause().getMessage();
        }
        if (state == State.UNSUBSCRIBED) {
            return; // reset since it was sent
        }
        boolean leave = sent.memberEpoch() < 0;
        if (leave) {
            if (CoordinatorCalls.isCoordinatorError(code)) {
                locator.markUnknown(nowMs); // the owner waits; the leave goes again to the next one
                return;
            }
            if (code != Errors.NONE) {
                LOG.info("leave of group {} answered {}: {}", groupId, Errors.name(code), message);
            }
            reset();
            return;
        }
        if (state == State.LEAVING) {
            return; // an ordinary heartbeat answered after the leave started: ignore it
        }
        if (code == Errors.NONE) {
            locator.succeeded();
            if (reply.memberId() != null && !reply.memberId().isEmpty()) {
                memberId = reply.memberId();
            }
            memberEpoch = reply.memberEpoch();
            heartbeatIntervalMs = Math.max(0, reply.heartbeatIntervalMs());
            nextHeartbeatMs = nowMs + heartbeatIntervalMs;
            if (sent.subscribedTopics() != null) {
                ackedSubscription = sent.subscribedTopics();
            }
            if (sent.owned() != null) {
                ackedOwned = sent.owned();
            }
            if (state == State.JOINING) {
                state = State.MEMBER;
            }
            if (reply.assignment() != null) {
                target = new LinkedHashSet<>(reply.assignment());
            }
        } else if (CoordinatorCalls.isFencedCode(code)) {
            LOG.info("member {} of group {} fenced ({}: {}); rejoining", memberId, groupId, Errors.name(code), message);
            loseAll("fenced");
            state = State.JOINING;
            memberId = null;
            memberEpoch = 0;
            target = null;
            resetAcked();
            nextHeartbeatMs = nowMs;
        } else if (CoordinatorCalls.isCoordinatorError(code)) {
            locator.markUnknown(nowMs);
            resetAcked();
            nextHeartbeatMs = nowMs;
        } else if (StellflowException.isRetriable(code)) {
            resetAcked();
            nextHeartbeatMs = nowMs + config.common().retryBackoffMs();
        } else {
            loseAll("failed");
            state = State.FAILED;
            fatal = new StellflowException(
                    code, "group " + groupId + " refused the member" + (message == null ? "" : ": " + message));
        }
    }

    private void resetAcked() {
        ackedSubscription = null;
        ackedOwned = null;
    }

    /** Drops every partition without revocation (no commit): the listener's onPartitionsLost. */
    private void loseAll(String why) {
        reconciliation = null;
        if (owned.isEmpty()) {
            return;
        }
        List<TopicPartition> lost = new ArrayList<>(owned);
        LOG.info("group {}: {} partitions lost ({})", groupId, lost.size(), why);
        boolean outer = inListener;
        inListener = true;
        try {
            listener.onPartitionsLost(lost);
        } catch (RuntimeException e) {
            deferError(e);
        } finally {
            inListener = outer;
        }
        owner.partitionsRevoked(lost);
        owned.clear();
    }

    private void deferError(RuntimeException e) {
        if (deferredError == null) {
            deferredError = e;
        } else {
            deferredError.addSuppressed(e);
        }
    }

    // ---- reconciliation -------------------------------------------------------------------------

    private enum Step {
        COMMIT_REVOKED,
        REVOKE,
        FETCH_OFFSETS,
        ASSIGN
    }

    /** One target being reconciled; owned by the owner thread. */
    private final class Reconciliation {
        final Set<TopicPartition> revoked = new LinkedHashSet<>();
        final Set<TopicPartition> added = new LinkedHashSet<>();
        final boolean leaving;
        Step step = Step.COMMIT_REVOKED;
        CompletableFuture<Void> revokeCommit;
        CompletableFuture<Map<TopicPartition, Long>> offsets;

        Reconciliation(Set<TopicPartition> target, boolean leaving) {
            this.leaving = leaving;
            for (TopicPartition tp : owned) {
                if (!target.contains(tp)) {
                    revoked.add(tp);
                }
            }
            for (TopicPartition tp : target) {
                if (!owned.contains(tp)) {
                    added.add(tp);
                }
            }
        }
    }

    private void reconcile(long nowMs) {
        if (inListener) {
            // A listener's blocking call (commitSync in onPartitionsRevoked) drives poll: the heartbeat
            // and the calls go on, the reconciliation waits for the listener to return, else the step
            // that called the listener would call it again, without end.
            return;
        }
        while (true) {
            Reconciliation r = reconciliation;
            if (r == null) {
                if (state != State.MEMBER || target == null || target.equals(owned)) {
                    return;
                }
                r = new Reconciliation(target, false);
                reconciliation = r;
            }
            if (!advance(r, nowMs)) {
                return;
            }
            if (reconciliation == r) {
                reconciliation = null;
            }
            if (r.leaving) {
                return;
            }
        }
    }

    /** Runs the steps of {@code r} that can run now; true when it finished. */
    private boolean advance(Reconciliation r, long nowMs) {
        while (reconciliation == r) {
            switch (r.step) {
                case COMMIT_REVOKED -> {
                    if (r.revokeCommit == null) {
                        Map<TopicPartition, Long> positions = positionsOf(r.revoked);
                        if (!config.enableAutoCommit() || positions.isEmpty()) {
                            r.step = Step.REVOKE;
                            continue;
                        }
                        r.revokeCommit =
                                commit(positions, true, nowMs + config.common().requestTimeoutMs(), null);
                    }
                    if (!r.revokeCommit.isDone()) {
                        return false;
                    }
                    if (r.revokeCommit.isCompletedExceptionally()) {
                        LOG.warn(
                                "group {}: commit of revoked partitions {} failed: {}",
                                groupId,
                                r.revoked,
                                NetworkClient.unwrap(r.revokeCommit.exceptionNow())
                                        .toString());
                    }
                    r.step = Step.REVOKE;
                }
                case REVOKE -> {
                    if (!r.revoked.isEmpty()) {
                        List<TopicPartition> revoked = List.copyOf(r.revoked);
                        boolean outer = inListener;
                        inListener = true;
                        try {
                            listener.onPartitionsRevoked(revoked);
                        } catch (RuntimeException e) {
                            deferError(e);
                        } finally {
                            inListener = outer;
                        }
                        owner.partitionsRevoked(revoked);
                        owned.removeAll(revoked);
                    }
                    if (r.leaving) {
                        return true;
                    }
                    r.step = Step.FETCH_OFFSETS;
                }
                case FETCH_OFFSETS -> {
                    if (r.added.isEmpty()) {
                        r.step = Step.ASSIGN;
                        continue;
                    }
                    if (r.offsets == null) {
                        r.offsets = fetchCommitted(r.added, Long.MAX_VALUE);
                    }
                    if (!r.offsets.isDone()) {
                        return false;
                    }
                    if (r.offsets.isCompletedExceptionally()) {
                        Throwable e = NetworkClient.unwrap(r.offsets.exceptionNow());
                        r.offsets = null; // asked again on the next poll; the heartbeat goes on meanwhile
                        deferError(
                                e instanceof StellflowException se
                                        ? se
                                        : new StellflowException(Errors.UNKNOWN_SERVER_ERROR, "OffsetFetch failed", e));
                        return false;
                    }
                    r.step = Step.ASSIGN;
                }
                case ASSIGN -> {
                    Map<TopicPartition, Long> committed = new LinkedHashMap<>();
                    Map<TopicPartition, Long> fetched = r.offsets == null ? Map.of() : r.offsets.join();
                    for (TopicPartition tp : r.added) {
                        committed.put(tp, fetched.getOrDefault(tp, -1L));
                    }
                    if (!committed.isEmpty()) {
                        owner.partitionsAssigned(committed);
                    }
                    owned.addAll(r.added);
                    boolean outer = inListener;
                    inListener = true;
                    try {
                        listener.onPartitionsAssigned(List.copyOf(r.added));
                    } catch (RuntimeException e) {
                        deferError(e);
                    } finally {
                        inListener = outer;
                    }
                    ackPending = true;
                    return true;
                }
            }
        }
        return false; // aborted (fenced) meanwhile
    }

    private Map<TopicPartition, Long> positionsOf(Set<TopicPartition> partitions) {
        Map<TopicPartition, Long> all = owner.positions();
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            Long p = all.get(tp);
            if (p != null && p >= 0) {
                out.put(tp, p);
            }
        }
        return out;
    }

    // ---- commits --------------------------------------------------------------------------------

    private void maybeAutoCommit(long nowMs) {
        if (!config.enableAutoCommit() || nowMs - nextAutoCommitMs < 0) {
            return;
        }
        nextAutoCommitMs = nowMs + config.autoCommitIntervalMs();
        if (state != State.MEMBER && state != State.UNSUBSCRIBED) {
            return; // no epoch to commit with
        }
        if (autoCommit != null && !autoCommit.isDone()) {
            return;
        }
        Map<TopicPartition, Long> changed = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, Long> e : owner.positions().entrySet()) {
            if (e.getValue() >= 0 && !e.getValue().equals(lastCommitted.get(e.getKey()))) {
                changed.put(e.getKey(), e.getValue());
            }
        }
        if (changed.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> copy = Map.copyOf(changed);
        autoCommit = commitCall(copy, false, nowMs + config.common().requestTimeoutMs());
        autoCommit.whenComplete((codes, err) -> {
            if (err == null) {
                lastCommitted.putAll(copy);
            } else {
                LOG.debug(
                        "group {}: auto commit failed: {}",
                        groupId,
                        NetworkClient.unwrap(err).toString());
            }
        });
    }

    /** Starts the auto commit clock for {@code assign} with a group id (no subscription). */
    void startAutoCommit(long nowMs) {
        if (config.enableAutoCommit() && nextAutoCommitMs == Long.MAX_VALUE) {
            nextAutoCommitMs = nowMs + config.autoCommitIntervalMs();
        }
    }

    private CompletableFuture<Map<TopicPartition, Short>> commitCall(
            Map<TopicPartition, Long> offsets, boolean retry, long deadlineMs) {
        return calls.add(
                "OffsetCommit",
                c -> {
                    boolean inGroup = state == State.MEMBER || state == State.LEAVING;
                    return transport.commitOffsets(
                            c, groupId, inGroup ? memberId : null, inGroup ? memberEpoch : -1, offsets);
                },
                CoordinatorCalls::firstError,
                retry,
                deadlineMs);
    }
}
