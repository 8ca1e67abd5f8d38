package io.stellflow.client;

/**
 * Given to the callbacks (and futures) of records still outstanding when a producer closed
 * forcefully ({@code StellflowProducer.close(Duration)} whose timeout passed, or was zero; Kafka's
 * "Producer is closed forcefully"): a record never sent is in no partition, nor is one whose batch
 * the broker refused as too large and that was not yet split and sent again (the refusal is the
 * cause), unless an earlier attempt of that batch got no answer; one in flight, or of such a batch,
 * may or may not be stored (the message says which). Not {@linkplain #retriable() retriable}: this producer
 * sends nothing more, so the application resends with a new producer if it must. Code {@link
 * StellflowException#NETWORK_ERROR} (a local outcome, no wire code).
 */
public final class ProducerClosedException extends StellflowException {
    ProducerClosedException(String message, Throwable cause) {
        super(NETWORK_ERROR, message, cause);
    }

    /** Always false: the producer is closed. */
    @Override
    public boolean retriable() {
        return false;
    }
}
