package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.TransactionResponse;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.function.ToIntFunction;

/**
 * A transactional producer's requests to its transaction coordinator over the network: InitProducerId
 * v1 (with {@code transaction.timeout.ms}), BeginTransaction v1 (answers the transaction's sequence),
 * EndTransaction v2 (carries it; v1 to a coordinator that speaks no v2, and {@link #beginsImplicitly}
 * tells which was answered). The coordinator is found with FindCoordinator v1, keyType 1 (the
 * transactional id), at any broker; a broker that speaks only v0 (INVALID_REQUEST to keyType 1) is
 * taken as the coordinator itself.
 *
 * <p>Each call is retried, with {@code retry.backoff.ms} doubling up to {@code retry.backoff.max.ms},
 * on {@code COORDINATOR_NOT_AVAILABLE}, {@code NOT_COORDINATOR} (the coordinator is looked up again),
 * {@code CONCURRENT_TRANSACTIONS}, network errors and the retriable codes, until {@code max.block.ms}
 * has passed; it then throws a {@link StellflowException} with the last error's code and reason.
 * Other answers are returned as they are (their error codes included) for {@link ProducerTransactions}
 * to judge.
 *
 * <p>Thread-safety: one call at a time (the caller, {@link ProducerTransactions}, serialises them).
 */
final class TransactionCoordinatorCalls implements ProducerTransactions.Calls {
    private final NetworkClient network;
    private final MetadataCache metadata;
    private final String transactionalId;
    private final long maxBlockMs;
    private HostPort coordinator;
    /** The EndTransaction version of the last End answered; only the caller's thread reads it. */
    private short lastEndVersion;

    TransactionCoordinatorCalls(NetworkClient network, MetadataCache metadata, ProducerConfig config) {
        this.network = network;
        this.metadata = metadata;
        this.transactionalId = config.transactionalId();
        this.maxBlockMs = config.maxBlockMs();
    }

    @Override
    public ProducerTransactions.Answer initProducerId(int transactionTimeoutMs) {
        InitProducerIdRequest req = new InitProducerIdRequest(transactionalId, transactionTimeoutMs);
        InitProducerIdResponse r = call(
                "InitProducerId",
                ApiKeys.INIT_PRODUCER_ID,
                InitProducerIdRequest.VERSION_WITH_TIMEOUT,
                v -> out -> req.write(out, (short) v),
                v -> InitProducerIdResponse::read,
                InitProducerIdResponse::errorCode);
        return new ProducerTransactions.Answer(r.errorCode(), r.producerId(), r.producerEpoch(), -1L);
    }

    @Override
    public ProducerTransactions.Answer beginTransaction(long producerId, short epoch) {
        BeginTransactionRequest req = new BeginTransactionRequest(transactionalId, producerId, epoch);
        TransactionResponse r = call(
                "BeginTransaction",
                ApiKeys.BEGIN_TRANSACTION,
                TransactionResponse.BEGIN_VERSION_WITH_SEQUENCE,
                v -> req::write,
                v -> body -> TransactionResponse.read(body, v >= TransactionResponse.BEGIN_VERSION_WITH_SEQUENCE),
                TransactionResponse::errorCode);
        return new ProducerTransactions.Answer(r.errorCode(), producerId, epoch, r.transactionSequence());
    }

    @Override
    public ProducerTransactions.Answer endTransaction(
            long producerId, short epoch, boolean commit, long transactionSequence) {
        EndTransactionRequest req =
                new EndTransactionRequest(transactionalId, producerId, epoch, commit, transactionSequence);
        short[] sent = {0}; // the version of the attempt answered last (set on the I/O thread before its answer)
        TransactionResponse r = call(
                "EndTransaction",
                ApiKeys.END_TRANSACTION,
                EndTransactionRequest.VERSION_IMPLICIT_BEGIN,
                v -> {
                    sent[0] = (short) v;
                    return out -> req.write(out, (short) v);
                },
                v -> TransactionResponse::read,
                TransactionResponse::errorCode);
        lastEndVersion = sent[0];
        return new ProducerTransactions.Answer(r.errorCode(), producerId, epoch, transactionSequence);
    }

    @Override
    public boolean beginsImplicitly() {
        return lastEndVersion >= EndTransactionRequest.VERSION_IMPLICIT_BEGIN;
    }

    /** Whether a call is sent again after {@code code} (to a coordinator looked up again for 16 and 17). */
    static boolean retriable(short code) {
        return code == Errors.COORDINATOR_NOT_AVAILABLE
                || code == Errors.NOT_COORDINATOR
                || code == Errors.CONCURRENT_TRANSACTIONS
                || StellflowException.isRetriable(code);
    }

    private <T> T call(
            String what,
            short apiKey,
            short version,
            IntFunction<BodyWriter> bodies,
            IntFunction<BodyReader<T>> readers,
            ToIntFunction<T> codeOf) {
        long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxBlockMs);
        StellflowException last = null;
        int attempts = 0;
        while (true) {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime());
            if (leftMs <= 0) {
                throw new StellflowException(
                        last == null ? StellflowException.NETWORK_ERROR : last.errorCode(),
                        what + " for transactional.id=" + transactionalId + " did not succeed within max.block.ms="
                                + maxBlockMs + (last == null ? "" : "; last error: " + last.reason()),
                        last);
            }
            try {
                HostPort to = coordinator(leftMs);
                if (to == null) {
                    last = new StellflowException(
                            Errors.COORDINATOR_NOT_AVAILABLE, "no coordinator for transactional.id=" + transactionalId);
                } else {
                    T r = network.sendVersioned(to, apiKey, version, bodies, readers)
                            .get(leftMs, TimeUnit.MILLISECONDS);
                    short code = (short) codeOf.applyAsInt(r);
                    if (!retriable(code)) {
                        return r;
                    }
                    if (code == Errors.NOT_COORDINATOR || code == Errors.COORDINATOR_NOT_AVAILABLE) {
                        coordinator = null;
                    }
                    last = new StellflowException(code, what + " answered by " + to);
                }
            } catch (ExecutionException e) {
                StellflowException se = e.getCause() instanceof StellflowException s
                        ? s
                        : new StellflowException(StellflowException.NETWORK_ERROR, what + " failed", e.getCause());
                if (!retriable(se.errorCode())) {
                    throw se;
                }
                coordinator = null;
                last = se;
            } catch (TimeoutException e) {
                coordinator = null;
                last = new StellflowException(StellflowException.NETWORK_ERROR, what + " timed out", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StellflowException(StellflowException.NETWORK_ERROR, what + " interrupted", e);
            }
            sleep(Math.min(network.config().retryBackoffMs(++attempts), Math.max(1, leftMs)));
        }
    }

    /** A FindCoordinator answer and the broker that gave it. */
    private record Answered(HostPort from, FindCoordinatorResponse response) {}

    /**
     * The coordinator's address, looked up when unknown at a broker of the metadata (passing over
     * ones that refuse the connection, {@link MetadataCache#sendToAnyBroker}); null when the lookup
     * answered a retriable error (the topic is being created, its leader is loading).
     */
    private HostPort coordinator(long timeoutMs) throws ExecutionException, TimeoutException, InterruptedException {
        if (coordinator != null) {
            return coordinator;
        }
        FindCoordinatorRequest req =
                new FindCoordinatorRequest(transactionalId, FindCoordinatorRequest.KEY_TYPE_TRANSACTION);
        Answered answered = metadata.sendToAnyBroker(to -> network.sendVersioned(
                                to,
                                ApiKeys.FIND_COORDINATOR,
                                FindCoordinatorRequest.VERSION_WITH_TRANSACTION_KEY,
                                v -> req::write,
                                v -> FindCoordinatorResponse::read)
                        .thenApply(resp -> new Answered(to, resp)))
                .get(timeoutMs, TimeUnit.MILLISECONDS);
        HostPort any = answered.from();
        FindCoordinatorResponse r = answered.response();
        if (r.errorCode() == Errors.NONE) {
            coordinator = new HostPort(r.host(), r.port());
        } else if (r.errorCode() == Errors.INVALID_REQUEST) {
            coordinator = any; // a broker without FindCoordinator v1: it answers NOT_COORDINATOR if it is not
        } else if (!retriable(r.errorCode())) {
            throw new StellflowException(
                    r.errorCode(),
                    "FindCoordinator for transactional.id=" + transactionalId + " at " + any + " refused");
        }
        return coordinator;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
        }
    }
}
