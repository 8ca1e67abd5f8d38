package io.stellflow.client;

import io.stellflow.protocol.Errors;

/**
 * Given to the callbacks (and futures) of records that were still waiting to be sent when their
 * transaction was aborted ({@code StellflowProducer.abortTransaction}): they were never sent, so none
 * of them is in any partition. Code {@code INVALID_TXN_STATE} (25).
 */
public final class TransactionAbortedException extends StellflowException {
    TransactionAbortedException(String message) {
        super(Errors.INVALID_TXN_STATE, message);
    }
}
