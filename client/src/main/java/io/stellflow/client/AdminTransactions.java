package io.stellflow.client;

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
import io.stellflow.protocol.message.WriteTxnMarkersRequest;
import io.stellflow.protocol.message.WriteTxnMarkersResponse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Transaction administration ({@code docs/protocol-additions.md}, apiKeys 32-34 and WriteTxnMarkers
 * 30; Kafka's KIP-664 set), obtained from {@link StellflowAdmin#transactions()}: what {@code
 * bin/stellflow-transactions.sh} is built on.
 *
 * <ul>
 *   <li>{@link #listTransactions}: ListTransactions at every broker (each answers for the ids it
 *       coordinates), merged by id.
 *   <li>{@link #describeTransactions}: DescribeTransactions at every broker; the id's coordinator
 *       answers it, the others say NOT_COORDINATOR (so no FindCoordinator key type is needed).
 *   <li>{@link #describeProducers}: DescribeProducers at each partition's leader.
 *   <li>{@link #abortTransaction}: an ABORT marker written by the partition's leader (WriteTxnMarkers),
 *       for an operator closing a hanging transaction.
 * </ul>
 *
 * <p>Errors: a broker that does not answer within {@code request.timeout.ms} or does not serve the
 * API throws {@link StellflowException} naming the broker; per-id and per-partition codes are
 * returned, not thrown.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class AdminTransactions {
    /** How long a leader may wait for an abort marker to be replicated, ms (the tool's default request timeout). */
    static final int ABORT_TIMEOUT_MS = 30_000;

    private final NetworkClient network;
    private final MetadataCache metadata;

    AdminTransactions(NetworkClient network, MetadataCache metadata) {
        this.network = network;
        this.metadata = metadata;
    }

    /**
     * Every transactional id of the cluster that passes the filters, sorted by id.
     *
     * @param states Kafka's state names ({@code Ongoing}, {@code PrepareCommit}, ...); empty: all
     * @param producerIds empty: all
     */
    public List<ListTransactionsResponse.ListedTransaction> listTransactions(
            List<String> states, List<Long> producerIds) {
        ListTransactionsRequest request = new ListTransactionsRequest(states, producerIds);
        Map<String, ListTransactionsResponse.ListedTransaction> all = new TreeMap<>();
        for (Map.Entry<Integer, HostPort> b : brokers().entrySet()) {
            ListTransactionsResponse r = call(
                    b.getKey(),
                    b.getValue(),
                    "ListTransactions",
                    ApiKeys.LIST_TRANSACTIONS,
                    request::write,
                    ListTransactionsResponse::read);
            if (r.errorCode() != Errors.NONE) {
                throw new StellflowException(r.errorCode(), "ListTransactions at broker " + b.getKey() + " refused");
            }
            for (ListTransactionsResponse.ListedTransaction t : r.transactions()) {
                all.putIfAbsent(t.transactionalId(), t);
            }
        }
        return List.copyOf(all.values());
    }

    /**
     * Each id's state at its coordinator, in the order given. An id no broker coordinates now (its
     * {@code __transaction_state} partition moving or loading) keeps the last coordinator error
     * (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE); an id its coordinator does not know has state
     * {@link DescribeTransactionsResponse#DEAD}.
     */
    public List<DescribedTransaction> describeTransactions(List<String> transactionalIds) {
        Map<String, DescribedTransaction> found = new LinkedHashMap<>();
        for (String id : transactionalIds) {
            found.put(id, DescribedTransaction.of(Errors.NOT_COORDINATOR, id, ""));
        }
        DescribeTransactionsRequest request = new DescribeTransactionsRequest(transactionalIds);
        for (Map.Entry<Integer, HostPort> b : brokers().entrySet()) {
            DescribeTransactionsResponse r = call(
                    b.getKey(),
                    b.getValue(),
                    "DescribeTransactions",
                    ApiKeys.DESCRIBE_TRANSACTIONS,
                    request::write,
                    DescribeTransactionsResponse::read);
            merge(found, r.transactions());
        }
        return List.copyOf(found.values());
    }

    /**
     * Takes one broker's answers into {@code found} (the ids asked for): an answer of an id's
     * coordinator replaces a coordinator error and is never replaced; COORDINATOR_NOT_AVAILABLE (the
     * coordinator is loading) replaces NOT_COORDINATOR; ids not asked for are ignored.
     */
    static void merge(Map<String, DescribedTransaction> found, List<DescribedTransaction> answers) {
        for (DescribedTransaction t : answers) {
            DescribedTransaction had = found.get(t.transactionalId());
            if (had == null || isAnswer(had)) {
                continue; // not asked for, or already answered by its coordinator
            }
            if (isAnswer(t) || t.errorCode() == Errors.COORDINATOR_NOT_AVAILABLE) {
                found.put(t.transactionalId(), t);
            }
        }
    }

    /** An answer of the id's coordinator (anything but a coordinator error). */
    private static boolean isAnswer(DescribedTransaction t) {
        return t.errorCode() != Errors.NOT_COORDINATOR && t.errorCode() != Errors.COORDINATOR_NOT_AVAILABLE;
    }

    /**
     * The producer state of each partition at its leader, in the order given. A partition without a
     * leader in the metadata is answered LEADER_NOT_AVAILABLE (UNKNOWN_TOPIC_OR_PARTITION when the
     * topic or partition does not exist), without a request.
     */
    public Map<TopicPartition, DescribeProducersResponse.Partition> describeProducers(
            Collection<TopicPartition> partitions) {
        List<String> topics =
                partitions.stream().map(TopicPartition::topic).distinct().toList();
        await(metadata.refresh(topics), "Metadata for DescribeProducers");
        Map<TopicPartition, DescribeProducersResponse.Partition> out = new LinkedHashMap<>();
        Map<HostPort, Map<String, List<Integer>>> byLeader = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            out.put(tp, null);
            HostPort leader = metadata.leader(tp);
            if (leader == null) {
                out.put(tp, new DescribeProducersResponse.Partition(tp.partition(), missingLeader(tp), List.of()));
            } else {
                byLeader.computeIfAbsent(leader, k -> new LinkedHashMap<>())
                        .computeIfAbsent(tp.topic(), k -> new ArrayList<>())
                        .add(tp.partition());
            }
        }
        for (Map.Entry<HostPort, Map<String, List<Integer>>> e : byLeader.entrySet()) {
            List<TopicPartitions> request = new ArrayList<>();
            e.getValue().forEach((t, ps) -> request.add(new TopicPartitions(t, ps)));
            DescribeProducersResponse r = call(
                    -1,
                    e.getKey(),
                    "DescribeProducers",
                    ApiKeys.DESCRIBE_PRODUCERS,
                    new DescribeProducersRequest(request)::write,
                    DescribeProducersResponse::read);
            for (DescribeProducersResponse.Topic t : r.topics()) {
                for (DescribeProducersResponse.Partition p : t.partitions()) {
                    TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                    if (out.containsKey(tp)) {
                        out.put(tp, p);
                    }
                }
            }
        }
        out.replaceAll((tp, p) -> p != null
                ? p
                : new DescribeProducersResponse.Partition(tp.partition(), Errors.UNKNOWN_SERVER_ERROR, List.of()));
        return out;
    }

    private short missingLeader(TopicPartition tp) {
        TopicDescription t = metadata.topic(tp.topic());
        if (t == null
                || t.errorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION
                || (t.errorCode() == Errors.NONE
                        && tp.partition() >= t.partitions().size())) {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        return Errors.LEADER_NOT_AVAILABLE;
    }

    /**
     * Has the leader of {@code tp} append an ABORT marker for {@code producerId}'s open transaction
     * (WriteTxnMarkers, apiKey 30): its records become aborted and the partition's last stable offset
     * moves past them. Meant for a hanging transaction its coordinator no longer knows; the log
     * refuses a marker of an older producer epoch (INVALID_PRODUCER_EPOCH), of an older transaction
     * sequence (INVALID_TXN_STATE) or an older coordinator epoch than the producer's last marker
     * (TRANSACTION_COORDINATOR_FENCED); a producer with no open transaction changes nothing.
     *
     * @return the leader's code for the partition (NONE once the marker is below the high
     *     watermark), LEADER_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION without a request
     */
    public short abortTransaction(
            TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch, long transactionSequence) {
        await(metadata.refresh(List.of(tp.topic())), "Metadata for WriteTxnMarkers");
        HostPort leader = metadata.leader(tp);
        if (leader == null) {
            return missingLeader(tp);
        }
        WriteTxnMarkersRequest request = new WriteTxnMarkersRequest(
                producerId,
                producerEpoch,
                false,
                coordinatorEpoch,
                transactionSequence,
                Math.min(ABORT_TIMEOUT_MS, network.config().requestTimeoutMs()),
                List.of(new WriteTxnMarkersRequest.TopicPartition(tp.topic(), tp.partition())));
        WriteTxnMarkersResponse r = call(
                -1,
                leader,
                "WriteTxnMarkers",
                ApiKeys.WRITE_TXN_MARKERS,
                request::write,
                WriteTxnMarkersResponse::read);
        if (r.partitions().size() != 1) {
            throw new StellflowException(
                    Errors.UNKNOWN_SERVER_ERROR,
                    "WriteTxnMarkers at " + leader + ": answered "
                            + r.partitions().size() + " partitions for 1");
        }
        return r.partitions().get(0).errorCode();
    }

    private Map<Integer, HostPort> brokers() {
        await(metadata.refresh(List.of()), "Metadata");
        return new TreeMap<>(metadata.brokers());
    }

    private <T> T call(int brokerId, HostPort broker, String api, short apiKey, BodyWriter body, BodyReader<T> reader) {
        String what = api + " at " + (brokerId >= 0 ? "broker " + brokerId + " (" + broker + ")" : broker);
        try {
            return await(network.send(broker, apiKey, body, reader), what);
        } catch (StellflowException e) {
            if (e.errorCode() == Errors.FEATURE_NOT_ENABLED || e.errorCode() == Errors.UNSUPPORTED_VERSION) {
                throw new StellflowException(
                        e.errorCode(), what + ": the broker does not serve " + api + " (older version)", e);
            }
            throw e;
        }
    }

    private <T> T await(java.util.concurrent.CompletableFuture<T> f, String what) {
        return AdminGroupCalls.await(f, what, network.config().requestTimeoutMs());
    }
}
