package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.coordinator.CoordinatorException;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.broker.transaction.TransactionCoordinator;
import io.stellflow.broker.transaction.TransactionPartition;
import io.stellflow.broker.transaction.TransactionView;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeProducersRequest;
import io.stellflow.protocol.message.DescribeProducersResponse;
import io.stellflow.protocol.message.DescribeTransactionsRequest;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.DescribeTransactionsResponse.DescribedTransaction;
import io.stellflow.protocol.message.ListTransactionsRequest;
import io.stellflow.protocol.message.ListTransactionsResponse;
import io.stellflow.protocol.message.TopicPartitions;
import io.stellflow.storage.ActiveProducer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The read-only transaction admin APIs of {@code bin/stellflow-transactions.sh} ({@code
 * docs/protocol-additions.md}, Kafka's KIP-664 set):
 *
 * <ul>
 *   <li>ListTransactions (32): the transactional ids of the {@code __transaction_state} partitions
 *       this broker coordinates, filtered by Kafka's state names and by producer id (an empty filter
 *       passes all), sorted by id. A partition still loading is not listed.
 *   <li>DescribeTransactions (33): each id's state at its coordinator, in request order; {@code
 *       NOT_COORDINATOR} per id this broker does not coordinate, {@code COORDINATOR_NOT_AVAILABLE}
 *       while its partition loads, {@code INVALID_REQUEST} for an empty id, state {@code Dead} for
 *       an id its coordinator does not know.
 *   <li>DescribeProducers (34): per partition led here, the producer state of its log ({@link
 *       io.stellflow.storage.UnifiedLog#activeProducers}); {@code NOT_LEADER_OR_FOLLOWER} or {@code
 *       UNKNOWN_TOPIC_OR_PARTITION} ({@link PartitionRouter#errorFor}) otherwise.
 * </ul>
 *
 * <p>Thread-safety: stateless apart from the thread-safe coordinator and router.
 */
public final class TransactionAdminHandlers {
    private final TransactionCoordinator coordinator;
    private final PartitionRouter router;

    /**
     * @param coordinator this broker's transaction coordinator
     * @param router the partitions this broker leads (never auto-creates a topic here)
     */
    public TransactionAdminHandlers(TransactionCoordinator coordinator, PartitionRouter router) {
        this.coordinator = coordinator;
        this.router = router;
    }

    /** The handlers by API key. */
    public Map<Short, ApiHandler> handlers() {
        Map<Short, ApiHandler> h = new LinkedHashMap<>();
        h.put(ApiKeys.LIST_TRANSACTIONS, this::listTransactions);
        h.put(ApiKeys.DESCRIBE_TRANSACTIONS, this::describeTransactions);
        h.put(ApiKeys.DESCRIBE_PRODUCERS, this::describeProducers);
        return h;
    }

    private void listTransactions(RequestContext context, ByteBuf body) {
        ListTransactionsRequest req = ListTransactionsRequest.read(body);
        Set<String> states = new HashSet<>(req.stateFilters());
        Set<Long> producerIds = new HashSet<>(req.producerIdFilters());
        coordinator.listTransactions().whenComplete((all, e) -> {
            List<ListTransactionsResponse.ListedTransaction> out = new ArrayList<>();
            if (all != null) {
                for (TransactionView t : all) {
                    String state = TransactionView.kafkaName(t.state());
                    if ((states.isEmpty() || states.contains(state))
                            && (producerIds.isEmpty() || producerIds.contains(t.producerId()))) {
                        out.add(new ListTransactionsResponse.ListedTransaction(
                                t.transactionalId(), t.producerId(), state));
                    }
                }
            }
            out.sort(Comparator.comparing(ListTransactionsResponse.ListedTransaction::transactionalId));
            context.respond(
                    new ListTransactionsResponse(e == null ? Errors.NONE : CoordinatorException.errorCodeOf(e), out));
        });
    }

    private void describeTransactions(RequestContext context, ByteBuf body) {
        DescribeTransactionsRequest req = DescribeTransactionsRequest.read(body);
        List<CompletableFuture<DescribedTransaction>> parts =
                new ArrayList<>(req.transactionalIds().size());
        for (String id : req.transactionalIds()) {
            parts.add(
                    id.isEmpty()
                            ? CompletableFuture.completedFuture(DescribedTransaction.of(Errors.INVALID_REQUEST, id, ""))
                            : coordinator
                                    .describeTransaction(id)
                                    .handle((t, e) -> e != null
                                            ? DescribedTransaction.of(CoordinatorException.errorCodeOf(e), id, "")
                                            : described(id, t)));
        }
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> context.respond(new DescribeTransactionsResponse(
                        parts.stream().map(CompletableFuture::join).toList())));
    }

    private static DescribedTransaction described(String id, TransactionView t) {
        if (t == null) {
            return DescribedTransaction.of(Errors.NONE, id, DescribeTransactionsResponse.DEAD);
        }
        List<DescribeTransactionsResponse.TopicPartition> partitions =
                new ArrayList<>(t.partitions().size());
        for (TransactionPartition p : t.partitions()) {
            partitions.add(new DescribeTransactionsResponse.TopicPartition(p.topic(), p.partition()));
        }
        return new DescribedTransaction(
                Errors.NONE,
                id,
                TransactionView.kafkaName(t.state()),
                t.timeoutMs(),
                t.startMs(),
                t.producerId(),
                t.producerEpoch(),
                t.sequence(),
                partitions);
    }

    private void describeProducers(RequestContext context, ByteBuf body) {
        DescribeProducersRequest req = DescribeProducersRequest.read(body);
        List<DescribeProducersResponse.Topic> topics =
                new ArrayList<>(req.topics().size());
        for (TopicPartitions t : req.topics()) {
            List<DescribeProducersResponse.Partition> out =
                    new ArrayList<>(t.partitions().size());
            for (int p : t.partitions()) {
                Partition partition = p < 0 ? null : router.leaderPartition(t.topic(), p);
                if (partition == null) {
                    short code = p < 0 ? Errors.UNKNOWN_TOPIC_OR_PARTITION : router.errorFor(t.topic(), p);
                    out.add(new DescribeProducersResponse.Partition(p, code, List.of()));
                    continue;
                }
                List<DescribeProducersResponse.Producer> producers = new ArrayList<>();
                for (ActiveProducer a : partition.log().activeProducers()) {
                    producers.add(new DescribeProducersResponse.Producer(
                            a.producerId(),
                            a.producerEpoch(),
                            a.lastSequence(),
                            a.lastTimestampMs(),
                            a.coordinatorEpoch(),
                            a.currentTxnStartOffset(),
                            a.transactionSequence()));
                }
                out.add(new DescribeProducersResponse.Partition(p, Errors.NONE, producers));
            }
            topics.add(new DescribeProducersResponse.Topic(t.topic(), out));
        }
        context.respond(new DescribeProducersResponse(topics));
    }
}
