package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsResponse;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Blocking ListOffsets (apiKey 4) against a partition's leader, with metadata refresh and retries
 * on retriable codes. Shared by the consumer and the admin client. Thread-safe.
 */
final class OffsetLookup {
    /** Earliest offset (log start). */
    static final long EARLIEST = -2L;
    /**
     * Latest visible offset (the high watermark, or the last stable offset at isolationLevel 1:
     * {@code docs/spec/wire-protocol.md} decision 9.k).
     */
    static final long LATEST = -1L;

    private final NetworkClient network;
    private final MetadataCache metadata;
    /** The ListOffsets isolationLevel: 0 read_uncommitted, 1 read_committed (latest is the LSO). */
    private final byte isolationLevel;

    OffsetLookup(NetworkClient network, MetadataCache metadata) {
        this(network, metadata, ConsumerConfig.READ_UNCOMMITTED);
    }

    OffsetLookup(NetworkClient network, MetadataCache metadata, byte isolationLevel) {
        this.network = network;
        this.metadata = metadata;
        this.isolationLevel = isolationLevel;
    }

    /**
     * Resolves {@code timestampSpec} (-2 earliest, -1 latest, {@code >= 0} first record at or after
     * that time) to an offset.
     *
     * @throws StellflowException with the partition's error code when it is not retriable or the
     *     retries ran out (OFFSET_OUT_OF_RANGE when no record is at or after the timestamp)
     */
    long lookup(TopicPartition tp, long timestampSpec) {
        ClientConfig cfg = network.config();
        StellflowException last = null;
        for (int attempt = 0; attempt <= cfg.retries(); attempt++) {
            if (attempt > 0) {
                pause(cfg.retryBackoffMs());
            }
            try {
                HostPort leader = metadata.leader(tp);
                if (leader == null) {
                    metadata.refresh(List.of(tp.topic())).get(cfg.requestTimeoutMs(), TimeUnit.MILLISECONDS);
                    leader = metadata.leader(tp);
                    if (leader == null) {
                        TopicDescription t = metadata.topic(tp.topic());
                        short code = t != null && t.errorCode() != Errors.NONE
                                ? t.errorCode()
                                : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                        last = new StellflowException(code, "no leader for " + tp);
                        continue;
                    }
                }
                int epoch = -1;
                ListOffsetsRequest req = new ListOffsetsRequest(
                        -1,
                        isolationLevel,
                        List.of(new ListOffsetsRequest.ListOffsetsTopic(
                                tp.topic(),
                                List.of(new ListOffsetsRequest.ListOffsetsPartition(
                                        tp.partition(), epoch, timestampSpec, 1)))));
                ListOffsetsResponse resp = network.send(
                                leader, ApiKeys.LIST_OFFSETS, req::write, ListOffsetsResponse::read)
                        .get(cfg.requestTimeoutMs() + 1000L, TimeUnit.MILLISECONDS);
                ListOffsetsResponse.ListOffsetsPartitionResponse p =
                        resp.topics().get(0).partitions().get(0);
                if (p.errorCode() == Errors.NONE) {
                    return p.offset();
                }
                last = new StellflowException(p.errorCode(), "ListOffsets " + tp + " at " + timestampSpec);
                if (!last.retriable()) {
                    throw last;
                }
                metadata.refresh(List.of(tp.topic()));
            } catch (ExecutionException e) {
                last = e.getCause() instanceof StellflowException se
                        ? se
                        : new StellflowException(
                                Errors.UNKNOWN_SERVER_ERROR, "ListOffsets " + tp + " failed", e.getCause());
                if (!last.retriable()) {
                    throw last;
                }
            } catch (TimeoutException e) {
                last = new StellflowException(StellflowException.NETWORK_ERROR, "ListOffsets " + tp + " timed out");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
            }
        }
        throw last;
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
        }
    }
}
