package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchLayout;

/**
 * The producer's error codes and messages: the code of a failed attempt, the message of a refused
 * or expired batch, the name of a code in logs.
 *
 * <p>Thread-safety: stateless.
 */
final class ProduceErrors {
    /**
     * The limit a MESSAGE_TOO_LARGE refusal of a Produce names: the broker checks the topic's key,
     * else its own (the answer carries neither value).
     */
    static final String LIMIT =
            "the topic's max.message.bytes (the broker's message.max.bytes for a topic without one)";

    private ProduceErrors() {}

    /**
     * The error of a batch that {@code delivery.timeout.ms} expired: its partition, the timeout, the
     * attempts made and the last attempt's error (for example the leader it could not reach). Its
     * code is the last attempt's (for example 32 NOT_ENOUGH_REPLICAS while the ISR stayed below
     * {@code min.insync.replicas}), or {@link StellflowException#NETWORK_ERROR} when no attempt got
     * an answer. A part of a batch refused as too large that was not sent yet says so, with {@link
     * StellflowException#NETWORK_ERROR}: the refusal (MESSAGE_TOO_LARGE) was its batch's, not its own.
     */
    static StellflowException deliveryTimeout(ProducerBatch b, ProducerConfig config) {
        String last;
        if (b.lastError != null) {
            // The exception appends the code in brackets, and it is the last error's: named once.
            last = "; last error: " + b.lastError.reason();
        } else if (b.splitDepth > 0) {
            last = "; this part was not sent yet" + maybeStoredWhole(b);
        } else {
            last = "; no attempt got an answer (no leader known for the partition)";
        }
        return new StellflowException(
                b.lastError == null ? StellflowException.NETWORK_ERROR : b.lastError.errorCode(),
                "produce to " + b.tp + ": batch expired after " + config.deliveryTimeoutMs()
                        + " ms (delivery.timeout.ms), " + (b.attempts + 1) + " attempt(s)" + splits(b) + last,
                b.lastError);
    }

    /**
     * For a part of a batch an earlier attempt of which got no answer ({@link
     * ProducerBatch#partOfMaybeAppended}): that its records may be stored all the same, else empty.
     */
    private static String maybeStoredWhole(ProducerBatch b) {
        return b.partOfMaybeAppended
                ? " (an earlier attempt of its whole batch got no answer: its records may be stored)"
                : "";
    }

    /** {@code " as a part of a batch split N time(s) ..."} for a part of a refused batch, else empty. */
    private static String splits(ProducerBatch b) {
        return b.splitDepth == 0
                ? ""
                : " as a part of a batch split " + b.splitDepth + " time(s) after refusals as too large";
    }

    /**
     * The error of a batch failed at a new producer id because an earlier attempt of it got no
     * verdict ({@link ProducerIdempotence#mustFailAfterReset}): it may be stored once under its old
     * stamp, never twice. Its code is the last attempt's, {@link StellflowException#NETWORK_ERROR}
     * without one.
     */
    static StellflowException outcomeUnknown(ProducerBatch b) {
        return new StellflowException(
                b.lastError == null ? StellflowException.NETWORK_ERROR : b.lastError.errorCode(),
                "produce to " + b.tp + ": outcome unknown after " + (b.attempts + 1)
                        + " attempt(s) (the batch may be stored under producer id " + b.producerId
                        + "); not sent again under the producer's new id, which would store it twice",
                b.lastError);
    }

    /**
     * The error of a batch failed by a forced close ({@code close(timeout)} whose timeout passed, or
     * {@code close(Duration.ZERO)}): "producer is closed forcefully", as Kafka's, and what became of
     * the batch: never sent, not sent again after failed attempts (their last error the cause),
     * refused as too large and not yet split and sent again in parts (the refusal the cause), or in
     * flight, its outcome unknown (the broker may have stored it). Code {@link
     * StellflowException#NETWORK_ERROR}, a local failure.
     *
     * @param inFlight whether the batch was in a Produce request not answered yet
     */
    static StellflowException closedForcefully(ProducerBatch b, boolean inFlight) {
        String what;
        StellflowException cause = inFlight ? null : b.lastError;
        if (inFlight) {
            what = "while the batch was in flight (attempt " + (b.attempts + 1) + "): it may or may not be stored";
        } else if (b.refusedAsTooLarge != null) {
            what = "after the broker refused the batch as too large (attempt " + (b.attempts + 1)
                    + ") and before it was split and sent again in parts; "
                    + (b.mayBeAppended
                            ? "an earlier attempt got no answer, so it may be stored"
                            : "the refusal stored none of its records");
            cause = b.refusedAsTooLarge;
        } else if (b.attempts == 0 && b.lastError == null) {
            what = b.partOfMaybeAppended
                    ? "before this part was sent" + maybeStoredWhole(b)
                    : "before the batch was sent; the batch was never sent";
        } else {
            what = "before the batch was sent again; " + (b.attempts + 1) + " attempt(s)"
                    + (b.lastError == null ? "" : ", last error: " + b.lastError.reason());
        }
        return new ProducerClosedException(
                "produce to " + b.tp + ": producer is closed forcefully (the close timeout passed, or it was 0) " + what
                        + splits(b),
                cause);
    }

    /** {@code NAME code} of a wire code, {@code NETWORK_ERROR} for a local failure. */
    static String codeName(short code) {
        return code == StellflowException.NETWORK_ERROR ? "NETWORK_ERROR" : Errors.name(code) + " " + code;
    }

    /**
     * The message of a refused produce; INVALID_RECORD says its usual cause, a sequence error the
     * batch's producer id, epoch and sequence and that the producer goes on under a new id,
     * MESSAGE_TOO_LARGE that the batch was split down to one record (or why it was not split).
     */
    static String produceFailure(TopicPartition tp, short code, ProducerBatch b) {
        if (code == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER || code == Errors.INVALID_PRODUCER_EPOCH) {
            return "produce to " + tp + " failed with " + codeName(code) + " (producer id " + b.producerId
                    + ", epoch " + b.producerEpoch + ", base sequence " + b.baseSequence
                    + "); the batch is lost and the producer goes on under a new producer id";
        }
        if (code == Errors.INVALID_RECORD) {
            return "produce to " + tp + " refused: a record was rejected; on a compacted topic"
                    + " (cleanup.policy=compact) every record needs a key, otherwise the batch was malformed";
        }
        if (code == Errors.MESSAGE_TOO_LARGE && b.recordCount() == 1) {
            return "produce to " + tp + " refused: a batch of " + sizeAsSent(b) + " holding one record is larger"
                    + " than " + LIMIT + " (or grows past it when the topic's compression.type recompresses it, for"
                    + " example to uncompressed); the producer splits a refused batch down to single records, and"
                    + " this record alone is too large: make it smaller, raise the topic's max.message.bytes"
                    + " (stellflow-configs.sh --alter) or the broker's message.max.bytes, or produce with the"
                    + " topic's compression.type";
        }
        if (code == Errors.MESSAGE_TOO_LARGE) {
            return "produce to " + tp + " refused: a batch of " + sizeAsSent(b) + " (" + b.recordCount()
                    + " records) is larger than " + LIMIT + " (or grows past it when the topic's compression.type"
                    + " recompresses it) and was not split further (delivery.timeout.ms used up, or its halves could"
                    + " not be built: see the producer's log); lower batch.size";
        }
        if (code == Errors.FEATURE_NOT_ENABLED && b.isCompressed() && !transactional(b)) {
            return "produce to " + tp + " refused with FEATURE_NOT_ENABLED for a compressed batch: the topic's"
                    + " compression.produce.policy is likely refuse (for readers that cannot decompress); produce to"
                    + " it with compression.type=none";
        }
        return "produce to " + tp + " failed";
    }

    /**
     * The message of a MESSAGE_TOO_LARGE refusal of a batch of {@code sizeAsSent} ({@link
     * #sizeAsSent}) and {@code records} records sent alone, which the producer splits: the cause of a
     * forced close's error while it waits for that ({@link #closedForcefully}).
     */
    static String refusedTooLarge(TopicPartition tp, String sizeAsSent, int records) {
        return "produce to " + tp + " refused: a batch of " + sizeAsSent + " (" + records + " records) is larger than "
                + LIMIT;
    }

    /**
     * {@code N bytes as sent}, and for a compressed batch its uncompressed size too: a
     * broker that recompresses (topic {@code compression.type}) judges the size after that.
     */
    static String sizeAsSent(ProducerBatch b) {
        if (!b.isCompressed()) {
            return b.sizeInBytes() + " bytes as sent";
        }
        return b.sizeInBytes() + " bytes as sent (" + b.uncompressedBytes() + " bytes uncompressed)";
    }

    /** Whether the batch has the transactional bit (FEATURE_NOT_ENABLED then means no transactions). */
    private static boolean transactional(ProducerBatch b) {
        ByteBuf bytes = b.bytes();
        return (RecordBatchLayout.attributes(bytes, bytes.readerIndex()) & RecordBatchLayout.TRANSACTIONAL_FLAG_MASK)
                != 0;
    }

    /**
     * The exception {@code err} carries when its code is {@code code}, else a new one with {@code
     * message}: a {@link RecordTooLargeException} for MESSAGE_TOO_LARGE (as Kafka's producer maps it).
     */
    static StellflowException cause(Throwable err, short code, String message) {
        if (NetworkClient.unwrap(err) instanceof StellflowException se && se.errorCode() == code) {
            return se;
        }
        return code == Errors.MESSAGE_TOO_LARGE
                ? new RecordTooLargeException(message)
                : new StellflowException(code, message);
    }

    static short errorCode(Throwable err, ProduceResponse.PartitionResponse result) {
        if (err != null) {
            Throwable cause = NetworkClient.unwrap(err);
            return cause instanceof StellflowException se ? se.errorCode() : Errors.UNKNOWN_SERVER_ERROR;
        }
        return result == null ? Errors.UNKNOWN_SERVER_ERROR : result.errorCode();
    }
}
