package io.stellflow.client;

import io.stellflow.protocol.Errors;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * A group member's queued requests to its coordinator other than the heartbeat (OffsetCommit,
 * OffsetFetch): each is sent when the coordinator is known, and after a coordinator error
 * (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, BROKER_NOT_AVAILABLE, a lost connection) the
 * coordinator is forgotten ({@link CoordinatorLocator#markUnknown}) and, if the call allows retries,
 * it is sent again to the next one until its deadline; other retriable codes wait {@code
 * retry.backoff.ms}. A call still waiting for a coordinator at its deadline fails with the last code
 * it saw. Results complete on the owner thread, from {@link #handle} or {@link #failExpired}, so
 * callbacks attached to them run there.
 *
 * <p>Thread-safety: confined to the owner thread of its {@link ConsumerMembership}.
 */
final class CoordinatorCalls {
    private final String groupId;
    private final CoordinatorLocator locator;
    private final ClientConfig config;
    private final Runnable wakeup;
    /** Who the member is now, for the message of a fenced call ("member m1 epoch 4"). */
    private final Supplier<String> member;

    private final ArrayDeque<Call<?>> calls = new ArrayDeque<>();

    CoordinatorCalls(
            String groupId, CoordinatorLocator locator, ClientConfig config, Runnable wakeup, Supplier<String> member) {
        this.groupId = groupId;
        this.locator = locator;
        this.config = config;
        this.wakeup = wakeup;
        this.member = member;
    }

    /**
     * Queues a call.
     *
     * @param send sends it to the given coordinator
     * @param errorOf the first error code in an answer (NONE: success)
     * @param retry whether coordinator and retriable errors send it again before {@code deadlineMs}
     * @return completes on the owner thread with the answer, or fails with a {@link StellflowException}
     */
    <T> CompletableFuture<T> add(
            String name,
            Function<HostPort, CompletableFuture<T>> send,
            ToIntFunction<T> errorOf,
            boolean retry,
            long deadlineMs) {
        Call<T> call = new Call<>(name, send, errorOf, retry, deadlineMs);
        calls.add(call);
        return call.result;
    }

    /** The first error code of an OffsetCommit answer, NONE when every partition was committed. */
    static short firstError(Map<TopicPartition, Short> codes) {
        for (short code : codes.values()) {
            if (code != Errors.NONE) {
                return code;
            }
        }
        return Errors.NONE;
    }

    /** When a call needs {@link #send} or {@link #failExpired} next (Long.MAX_VALUE: none waits). */
    long nextEventMs(long nowMs, boolean coordinatorKnown) {
        long next = Long.MAX_VALUE;
        for (Call<?> c : calls) {
            if (c.inFlight == null) {
                next = Math.min(
                        next,
                        coordinatorKnown
                                ? (c.notBeforeMs == Long.MIN_VALUE ? nowMs : Math.max(c.notBeforeMs, nowMs))
                                : c.deadlineMs);
            }
        }
        return next;
    }

    /** Sends every call that waits and may go now. */
    void send(HostPort coordinator, long nowMs) {
        for (Call<?> c : calls) {
            if (c.inFlight == null && (c.notBeforeMs == Long.MIN_VALUE || nowMs - c.notBeforeMs >= 0)) {
                sendOne(c, coordinator);
            }
        }
        handle(nowMs);
    }

    private <T> void sendOne(Call<T> c, HostPort coordinator) {
        c.inFlight = c.send.apply(coordinator);
        c.inFlight.whenComplete((r, e) -> wakeup.run());
    }

    /** Settles the answered calls (success, failure, or queued again). */
    void handle(long nowMs) {
        // Completing a call runs callbacks, which may queue new calls: complete after the walk.
        List<Runnable> completions = new ArrayList<>();
        for (Iterator<Call<?>> it = calls.iterator(); it.hasNext(); ) {
            Call<?> c = it.next();
            if (c.inFlight != null && c.inFlight.isDone() && settle(c, nowMs, completions)) {
                it.remove();
            }
        }
        completions.forEach(Runnable::run);
    }

    /** Fails the calls that waited for a coordinator past their deadline. */
    void failExpired(long nowMs) {
        List<Runnable> completions = new ArrayList<>();
        for (Iterator<Call<?>> it = calls.iterator(); it.hasNext(); ) {
            Call<?> c = it.next();
            if (c.inFlight == null && nowMs - c.deadlineMs >= 0) {
                it.remove();
                StellflowException e = new StellflowException(
                        c.lastCode, c.name + " for group " + groupId + ": no coordinator before the deadline");
                completions.add(() -> c.result.completeExceptionally(e));
            }
        }
        completions.forEach(Runnable::run);
    }

    /** True while any call is queued or in flight. */
    boolean pending() {
        return !calls.isEmpty();
    }

    /** One queued call. */
    private static final class Call<T> {
        final String name;
        final Function<HostPort, CompletableFuture<T>> send;
        final ToIntFunction<T> errorOf;
        final boolean retry;
        final long deadlineMs;
        final CompletableFuture<T> result = new CompletableFuture<>();
        CompletableFuture<T> inFlight;
        long notBeforeMs = Long.MIN_VALUE;
        short lastCode = StellflowException.NETWORK_ERROR;

        Call(
                String name,
                Function<HostPort, CompletableFuture<T>> send,
                ToIntFunction<T> errorOf,
                boolean retry,
                long deadlineMs) {
            this.name = name;
            this.send = send;
            this.errorOf = errorOf;
            this.retry = retry;
            this.deadlineMs = deadlineMs;
        }
    }

    /** Settles one answered call; true when it is finished (its completion queued). */
    private <T> boolean settle(Call<T> c, long nowMs, List<Runnable> completions) {
        CompletableFuture<T> done = c.inFlight;
        c.inFlight = null;
        T value = null;
        short code;
        Throwable cause = null;
        try {
            value = done.join();
            code = (short) c.errorOf.applyAsInt(value);
        } catch (CompletionException e) {
            cause = e.getCause();
            code = errorCode(cause);
        }
        c.lastCode = code;
        if (code == Errors.NONE) {
            locator.succeeded();
            T v = value;
            completions.add(() -> c.result.complete(v));
            return true;
        }
        boolean coordinatorError = isCoordinatorError(code);
        if (coordinatorError) {
            locator.markUnknown(nowMs);
        }
        if (c.retry && (coordinatorError || StellflowException.isRetriable(code)) && nowMs - c.deadlineMs < 0) {
            c.notBeforeMs = coordinatorError ? nowMs : nowMs + config.retryBackoffMs();
            return false;
        }
        String what = c.name + " for group " + groupId + " failed";
        if (isFencedCode(code)) {
            what = c.name + " for group " + groupId + " refused: " + member.get() + " no longer owns the partitions";
        }
        StellflowException e = new StellflowException(code, what, cause);
        completions.add(() -> c.result.completeExceptionally(e));
        return true;
    }

    // ---- error classes --------------------------------------------------------------------------

    /** The error code a failed future carries ({@link Errors#UNKNOWN_SERVER_ERROR} for a bug). */
    static short errorCode(Throwable t) {
        Throwable c = NetworkClient.unwrap(t);
        return c instanceof StellflowException se ? se.errorCode() : Errors.UNKNOWN_SERVER_ERROR;
    }

    /** The codes that send the member back to FindCoordinator: the coordinator moved or is away. */
    static boolean isCoordinatorError(short code) {
        return code == Errors.NOT_COORDINATOR
                || code == Errors.COORDINATOR_NOT_AVAILABLE
                || code == Errors.BROKER_NOT_AVAILABLE
                || code == StellflowException.NETWORK_ERROR;
    }

    /** The codes that say this member (epoch) is no longer in the group: rejoin with epoch 0. */
    static boolean isFencedCode(short code) {
        return code == Errors.FENCED_MEMBER_EPOCH
                || code == Errors.UNKNOWN_MEMBER_ID
                || code == Errors.STALE_MEMBER_EPOCH;
    }
}
