package io.stellflow.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Knows a group's coordinator: looks it up with FindCoordinator when unknown, forgets it on a
 * coordinator error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a lost connection), and spaces the
 * lookups with a bounded exponential back-off: after the n-th failure in a row the next lookup waits
 * {@link ClientConfig#retryBackoffMs(int)} ({@code retry.backoff.ms} doubled per failure, at most
 * {@code retry.backoff.max.ms}; 100, 200, 400, 800, 1000, 1000 ms with the defaults). The count of
 * failures goes back to zero only once a request to the coordinator succeeded ({@link
 * #succeeded}), so a coordinator that is found but keeps refusing (its partition is moving) is not
 * asked in a tight loop.
 *
 * <p>Thread-safety: confined to the owner thread of its {@link ConsumerMembership}; lookups complete
 * on the I/O thread and are looked at only from {@link #coordinator}.
 */
final class CoordinatorLocator {
    private final GroupTransport transport;
    private final String groupId;
    private final ClientConfig config;
    private final Runnable wakeup;

    private HostPort coordinator;
    private CompletableFuture<HostPort> lookup;
    private int failures;
    private long nextLookupMs;

    /** @param wakeup run (on any thread) when a lookup completes, so the owner thread polls again */
    CoordinatorLocator(GroupTransport transport, String groupId, ClientConfig config, Runnable wakeup) {
        this.transport = transport;
        this.groupId = groupId;
        this.config = config;
        this.wakeup = wakeup;
    }

    /**
     * The coordinator's address, or null while it is unknown (a lookup is then in flight or waits for
     * its back-off).
     *
     * @throws StellflowException when FindCoordinator fails with a code that retrying cannot fix
     *     (FEATURE_NOT_ENABLED, AUTHORIZATION_FAILED, INVALID_REQUEST ...); the next call looks again
     */
    HostPort coordinator(long nowMs) {
        if (coordinator != null) {
            return coordinator;
        }
        if (lookup != null && lookup.isDone()) {
            CompletableFuture<HostPort> done = lookup;
            lookup = null;
            try {
                coordinator = done.join();
                return coordinator;
            } catch (CompletionException e) {
                short code = CoordinatorCalls.errorCode(e.getCause());
                failed(nowMs);
                if (!CoordinatorCalls.isCoordinatorError(code) && !StellflowException.isRetriable(code)) {
                    throw new StellflowException(code, "cannot find the coordinator of group " + groupId, e.getCause());
                }
            }
        }
        if (lookup == null && (failures == 0 || nowMs - nextLookupMs >= 0)) {
            lookup = transport.findCoordinator(groupId);
            lookup.whenComplete((c, e) -> wakeup.run());
            if (lookup.isDone()) {
                return coordinator(nowMs);
            }
        }
        return null;
    }

    /** True while the coordinator's address is known. */
    boolean known() {
        return coordinator != null;
    }

    /** Forgets the coordinator after a coordinator error; the next lookup waits for the back-off. */
    void markUnknown(long nowMs) {
        if (coordinator != null) {
            coordinator = null;
            failed(nowMs);
        }
    }

    /** A request to the coordinator succeeded: the back-off starts over. */
    void succeeded() {
        failures = 0;
    }

    /** When the next lookup may be sent; {@link Long#MAX_VALUE} while none is needed or one is in flight. */
    long nextLookupMs(long nowMs) {
        if (coordinator != null || lookup != null) {
            return Long.MAX_VALUE;
        }
        return failures == 0 ? nowMs : nextLookupMs;
    }

    /** Failures in a row since the last success (for tests and logs). */
    int failures() {
        return failures;
    }

    private void failed(long nowMs) {
        failures++;
        nextLookupMs = nowMs + config.retryBackoffMs(failures);
    }
}
