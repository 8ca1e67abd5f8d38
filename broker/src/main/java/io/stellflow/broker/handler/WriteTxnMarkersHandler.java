package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.append.TxnMarker;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.transaction.LeaderMarkers;
import io.stellflow.broker.transaction.TransactionPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.WriteTxnMarkersRequest;
import io.stellflow.protocol.message.WriteTxnMarkersResponse;
import io.stellflow.protocol.message.WriteTxnMarkersResponse.PartitionResult;
import java.util.ArrayList;
import java.util.List;

/**
 * WriteTxnMarkers (apiKey 30, broker-to-broker, {@code docs/protocol-additions.md}): a transaction
 * coordinator on another broker has this leader append a transaction's COMMIT or ABORT marker to
 * each listed partition ({@link LeaderMarkers}); answered once every marker is below its high
 * watermark, or with a per-partition code (see {@link LeaderMarkers}). A request with no partition,
 * a negative timeout, an empty topic or a negative partition is answered {@code INVALID_REQUEST}
 * for each partition, nothing written.
 *
 * <p>Besides coordinators, {@code bin/stellflow-transactions.sh abort} sends it (an operator closing
 * a hanging transaction, {@code docs/operations.md}): the log's own checks (producer epoch,
 * transaction sequence, coordinator epoch) are what keep a stray marker from closing a live
 * transaction, since there is no authorization yet.
 *
 * <p>Thread-safety: stateless apart from the thread-safe {@link LeaderMarkers}.
 */
public final class WriteTxnMarkersHandler implements ApiHandler {
    /** The longest high-watermark wait a coordinator may ask for. */
    static final int MAX_TIMEOUT_MS = 60_000;

    private final LeaderMarkers markers;

    public WriteTxnMarkersHandler(LeaderMarkers markers) {
        this.markers = markers;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        // TODO(acl): once principals exist, allow only ClusterAction on the cluster (brokers) or
        // Write on the transactional id's producer (the transactions tool's abort), as Kafka does.
        WriteTxnMarkersRequest req = WriteTxnMarkersRequest.read(body);
        boolean valid = !req.partitions().isEmpty() && req.timeoutMs() >= 0 && req.producerId() >= 0;
        List<TransactionPartition> targets = new ArrayList<>(req.partitions().size());
        for (WriteTxnMarkersRequest.TopicPartition tp : req.partitions()) {
            if (tp.topic().isEmpty() || tp.partition() < 0) {
                valid = false;
                break;
            }
            targets.add(new TransactionPartition(tp.topic(), tp.partition()));
        }
        if (!valid) {
            List<PartitionResult> out = new ArrayList<>();
            for (WriteTxnMarkersRequest.TopicPartition tp : req.partitions()) {
                out.add(new PartitionResult(tp.topic(), tp.partition(), Errors.INVALID_REQUEST));
            }
            context.respond(new WriteTxnMarkersResponse(out));
            return;
        }
        TxnMarker marker = new TxnMarker(
                req.producerId(), req.producerEpoch(), req.commit(), req.coordinatorEpoch(), req.transactionSequence());
        markers.write(targets, marker, Math.min(req.timeoutMs(), MAX_TIMEOUT_MS))
                .whenComplete((codes, e) -> {
                    List<PartitionResult> out = new ArrayList<>(targets.size());
                    for (int i = 0; i < targets.size(); i++) {
                        TransactionPartition tp = targets.get(i);
                        out.add(new PartitionResult(
                                tp.topic(), tp.partition(), e != null ? Errors.BROKER_NOT_AVAILABLE : codes[i]));
                    }
                    context.respond(new WriteTxnMarkersResponse(out));
                });
    }
}
