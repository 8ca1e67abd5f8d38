package io.stellflow.broker.transaction;

import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.broker.transaction.TxnForwarder.Forward;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ForwardStatusRequest;
import io.stellflow.protocol.message.ForwardStatusResponse;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator's gate for control requests (InitProducerId, BeginTransaction, EndTransaction)
 * that another broker forwarded ({@code docs/exactly-once.md}, "Forwarding"). Before such a request
 * is submitted to the {@link TransactionCoordinator}, the forwarding broker is asked whether the
 * client's connection to it is still open (ForwardStatus, {@link Checker}); open: the request is
 * submitted; closed, unknown, unreachable or no answer within the check timeout: it is refused
 * without running ({@code COORDINATOR_NOT_AVAILABLE}, which only reaches a client still waiting).
 * So a forwarded End of transaction N delayed until its client gave up (closed its connection) and
 * began N+1 elsewhere cannot end N+1.
 *
 * <p>While a check is outstanding, every later control request of the same transactional id
 * (forwarded or sent here directly) waits behind it, in arrival order, and is submitted only after
 * it: a Begin of N+1 that arrives during the check of an End of N cannot overtake it. The
 * coordinator runs the commands of one id in submission order (one runtime thread per partition),
 * so the gate's order is the order they run in. A request of an id with nothing waiting and not
 * forwarded runs at once (one map lookup). Bounds: at most {@code maxWaitingPerId} requests wait
 * per id (more are refused at once) and a check lasts at most {@code checkTimeoutMs}, so a dead
 * forwarding broker holds an id for at most that long.
 *
 * <p>Thread-safety: every method from any thread; never blocks. Released commands run on {@code
 * executor}, one after the other per id.
 */
public final class ForwardGate {
    private static final Logger LOG = LoggerFactory.getLogger(ForwardGate.class);

    /** Default bound of the requests waiting behind a check, per transactional id. */
    public static final int DEFAULT_MAX_WAITING_PER_ID = 64;

    /** Asks a broker whether its forward is outstanding with an open client connection. */
    @FunctionalInterface
    public interface Checker {
        /**
         * @return true: open; false: closed or unknown; a failed future: the broker could not be asked
         */
        CompletableFuture<Boolean> isOpen(int brokerId, long forwardId);
    }

    private record Waiting(Forward forward, Runnable command, Runnable refuse) {}

    private final Checker checker;
    private final Executor executor;
    private final long checkTimeoutMs;
    private final int maxWaitingPerId;
    /** Ids with a check outstanding: the requests waiting behind it. Queues guarded by {@code this}. */
    private final Map<String, ArrayDeque<Waiting>> gates = new ConcurrentHashMap<>();

    /**
     * @param checker asks the forwarding broker (ForwardStatus)
     * @param executor runs the released commands (they may take a producer id from the block)
     * @param checkTimeoutMs the longest a check may take, ms (the broker-to-broker request timeout)
     * @param maxWaitingPerId the most requests waiting behind a check per id, >= 1
     */
    public ForwardGate(Checker checker, Executor executor, long checkTimeoutMs, int maxWaitingPerId) {
        if (checkTimeoutMs <= 0 || maxWaitingPerId < 1) {
            throw new IllegalArgumentException(
                    "checkTimeoutMs " + checkTimeoutMs + ", maxWaitingPerId " + maxWaitingPerId);
        }
        this.checker = checker;
        this.executor = executor;
        this.checkTimeoutMs = checkTimeoutMs;
        this.maxWaitingPerId = maxWaitingPerId;
    }

    /**
     * The checker of a broker: ForwardStatus over the broker-to-broker client {@code requests}, or
     * {@code forwarder} itself for this broker's own forwards.
     */
    public static Checker checker(int brokerId, TxnForwarder forwarder, Supplier<BrokerRequests> requests) {
        return (broker, forwardId) -> {
            if (broker == brokerId) {
                return CompletableFuture.completedFuture(forwarder.isOpen(forwardId));
            }
            return requests.get()
                    .send(
                            broker,
                            ApiKeys.FORWARD_STATUS,
                            (short) 0,
                            new ForwardStatusRequest(forwardId),
                            ForwardStatusResponse::read)
                    .thenApply(r -> r.errorCode() == Errors.NONE && r.open());
        };
    }

    /**
     * Runs {@code command} now, or once the requests of {@code transactionalId} ahead of it have been
     * submitted and (when {@code forward} is not null) its forwarding broker said its client is
     * still connected; otherwise runs {@code refuse} instead. Exactly one of the two runs, once.
     *
     * @param forward the request's origin ({@link TxnForwarder#forwardOf}); null for a request a
     *     client sent to this broker
     * @param command submits the request to the coordinator and answers it; must not block
     * @param refuse answers {@code COORDINATOR_NOT_AVAILABLE} without running the request
     */
    public void submit(String transactionalId, Forward forward, Runnable command, Runnable refuse) {
        if (forward == null && !gates.containsKey(transactionalId)) {
            command.run(); // the common case: a direct request, nothing in front of it
            return;
        }
        Waiting w = new Waiting(forward, command, refuse);
        synchronized (this) {
            ArrayDeque<Waiting> q = gates.get(transactionalId);
            if (q != null) {
                if (q.size() >= maxWaitingPerId) {
                    w = null;
                } else {
                    q.add(w);
                    return;
                }
            } else if (forward != null) {
                gates.put(transactionalId, new ArrayDeque<>());
            }
        }
        if (w == null) {
            LOG.debug("{} requests of transactional id {} wait already: refused", maxWaitingPerId, transactionalId);
            refuse.run();
        } else if (forward == null) {
            command.run(); // the check ahead of it ended meanwhile
        } else {
            check(transactionalId, w);
        }
    }

    /** The requests waiting behind a check, over every id (tests, diagnostics). */
    public synchronized int waiting() {
        int n = 0;
        for (ArrayDeque<Waiting> q : gates.values()) {
            n += q.size();
        }
        return n;
    }

    /** The ids with a check outstanding (tests, diagnostics). */
    public int gatedIds() {
        return gates.size();
    }

    private void check(String transactionalId, Waiting w) {
        CompletableFuture<Boolean> open;
        try {
            open = checker.isOpen(w.forward().brokerId(), w.forward().forwardId());
        } catch (RuntimeException e) {
            open = CompletableFuture.failedFuture(e);
        }
        open.orTimeout(checkTimeoutMs, TimeUnit.MILLISECONDS)
                .whenComplete((o, e) -> release(transactionalId, () -> {
                    if (e == null && Boolean.TRUE.equals(o)) {
                        w.command().run();
                    } else {
                        if (e != null) {
                            LOG.debug(
                                    "Cannot ask broker {} about forward {} of {}: refused ({})",
                                    w.forward().brokerId(),
                                    w.forward().forwardId(),
                                    transactionalId,
                                    String.valueOf(e));
                        }
                        w.refuse().run();
                    }
                }));
    }

    /** Runs {@code first} and then the requests waiting behind it, on the executor. */
    private void release(String transactionalId, Runnable first) {
        Runnable task = () -> {
            runSafely(first);
            advance(transactionalId);
        };
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            task.run(); // shutting down: finish here rather than hold the id
        }
    }

    private void advance(String transactionalId) {
        while (true) {
            Waiting next;
            synchronized (this) {
                ArrayDeque<Waiting> q = gates.get(transactionalId);
                next = q == null ? null : q.poll();
                if (next == null) {
                    gates.remove(transactionalId);
                    return;
                }
            }
            if (next.forward() == null) {
                runSafely(next.command());
            } else {
                check(transactionalId, next);
                return;
            }
        }
    }

    private static void runSafely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.error("A transactional request released by the forward gate failed", e);
        }
    }
}
