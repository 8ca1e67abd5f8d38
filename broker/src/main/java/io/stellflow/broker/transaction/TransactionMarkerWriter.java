package io.stellflow.broker.transaction;

import java.util.concurrent.CompletableFuture;

/**
 * Writes a transaction's markers to the leaders of its partitions (the log side of issue #20). The
 * coordinator calls it after the PREPARE record is committed in {@code __transaction_state}, and
 * records COMPLETE_COMMIT or COMPLETE_ABORT once the future completes normally. A future that
 * completes exceptionally leaves the transaction in PREPARE: the coordinator sends the same request
 * again at its next sweep ({@code transaction.abort.timed.out.transaction.cleanup.interval.ms}), so
 * an implementation must treat a repeated request as a no-op on the partitions that have it.
 *
 * <p>Thread-safety: implementations are called from the coordinator's runtime thread and must not
 * block it: they start the writes and return.
 */
@FunctionalInterface
public interface TransactionMarkerWriter {
    /**
     * The writer of a coordinator whose real one ({@link BrokerMarkerWriter}) is not installed yet:
     * every write fails, so a transaction handed to it stays in PREPARE and its sweeper sends the
     * markers again once the real writer is there. The broker installs the real one before it
     * receives any metadata, so no coordinator partition is loaded before.
     */
    TransactionMarkerWriter NOT_READY = request ->
            CompletableFuture.failedFuture(new IllegalStateException("the marker writer is not installed yet"));

    /**
     * @return completes normally once every partition of {@code request} holds the marker,
     *     exceptionally when one could not be written now
     */
    CompletableFuture<Void> writeMarkers(TransactionMarkerRequest request);
}
