package io.stellflow.client;

import io.stellflow.protocol.Errors;

/**
 * A record too large to produce, as Kafka's exception of that name: its serialized size (the record
 * and a batch header) is above the producer's {@code max.request.size} or {@code buffer.memory}
 * ({@link StellflowProducer#send} fails it at once, nothing is sent or waited for), or the broker
 * refused it even alone in its batch as larger than the topic's {@code max.message.bytes} (the
 * broker's {@code message.max.bytes} for a topic without one). The message names the size and the
 * limit's key. Not retriable: the same record fails again until the limit or the record changes.
 * Code {@code MESSAGE_TOO_LARGE} (12).
 */
public final class RecordTooLargeException extends StellflowException {
    RecordTooLargeException(String message) {
        super(Errors.MESSAGE_TOO_LARGE, message);
    }
}
