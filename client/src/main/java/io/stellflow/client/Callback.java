package io.stellflow.client;

/**
 * What {@link StellflowProducer#send(ProducerRecord, Callback)} calls once for each record: with its
 * metadata (partition, offset, timestamp) when the broker acknowledged its batch, or with the error
 * ({@link StellflowException} carrying the error code; other exceptions for a bug) when it failed.
 * The same contract as Kafka's producer {@code Callback}.
 *
 * <p>Called on the client's I/O thread (or on the sending thread for an error found before the record
 * was queued): it must be short and must not block or call {@link StellflowProducer#flush()}. What
 * it throws (an Error such as a failed assertion too, but not a {@link VirtualMachineError}) is logged
 * and does not affect other records.
 */
@FunctionalInterface
public interface Callback {
    /**
     * @param metadata the record's metadata, or null when {@code exception} is not null
     * @param exception null on success, else why the record was not written
     */
    void onCompletion(RecordMetadata metadata, Exception exception);
}
