package io.stellflow.client;

import io.stellflow.protocol.Errors;

/**
 * A transactional producer was fenced: another producer with the same {@code transactional.id} called
 * {@code initTransactions} (a higher epoch), or the coordinator aborted this producer's transaction on
 * its timeout under a bumped epoch. Fatal, as Kafka's exception of that name: the producer can only be
 * closed; every later transactional call throws it again. Code {@code PRODUCER_FENCED} (27).
 */
public final class ProducerFencedException extends StellflowException {
    ProducerFencedException(String message, Throwable cause) {
        super(Errors.PRODUCER_FENCED, message, cause);
    }
}
