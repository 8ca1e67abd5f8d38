package io.stellflow.broker.handler;

import static io.stellflow.broker.handler.ProduceHandler.error;
import static io.stellflow.broker.handler.ProduceHandler.notEnoughReplicas;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.append.PendingProduce;
import io.stellflow.broker.network.ConnectionHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.broker.transaction.TransactionPartition;
import io.stellflow.broker.transaction.TxnRegistrations;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceRequest.PartitionData;
import io.stellflow.protocol.message.ProduceRequest.TopicData;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.util.concurrent.RejectedExecutionException;

/**
 * The transactional path of {@link ProduceHandler}: a Produce with a transactionalId, on the request
 * pool. Per partition led here, the batch's producer id and epoch are registered with the
 * transaction's coordinator ({@link TxnRegistrations}; a cached registration of the same transaction
 * costs no round trip), then the batch is appended with the transaction's sequence by the {@link
 * Appender} ({@link Partition#appendTransactionalAsLeader}, on the partition's agent when there are
 * agents). A refused registration answers the coordinator's code ({@code INVALID_TXN_STATE}, {@code
 * INVALID_PRODUCER_EPOCH}, or {@code BROKER_NOT_AVAILABLE} when it cannot be reached) and appends
 * nothing. A Produce v2 carries the transaction's sequence: a cached registration of another
 * sequence is not used, and the coordinator refuses a sequence that is not its ONGOING transaction's
 * ({@code INVALID_TXN_STATE}), so a delayed Produce of an earlier transaction never joins the next
 * one. An append after a round trip runs in the connection's order: on the thread that got the
 * registration's answer when none of the connection's requests is queued or running on the request
 * pool and the append queue has room (it only queues the batch: one hop fewer), else on the pool. While a
 * registration of a producer's partition is out, that producer's later batches there do not use the
 * cache ({@link TxnRegistrations#registering}): they register too (the coordinator answers them after
 * the first, writing nothing) and are appended behind it, never before it, so a client keeping up to
 * {@code max.in.flight.requests.per.connection} requests in flight never sees its own batches
 * refused as out of order.
 *
 * <p>Thread-safety: stateless apart from the thread-safe registrations.
 */
final class TransactionalProduce {
    /** Appends one registered batch ({@code held}: its retained records, released by the call) or answers {@code -sequence}. */
    interface Appender {
        /** May wait (room in a full append queue, or the append itself without agents): on the request pool. */
        void append(
                PendingProduce pending, int slot, Partition partition, PartitionData data, ByteBuf held, long sequence);

        /**
         * As {@link #append} when that needs no waiting (an append queue with room, or an error
         * answer), returning true; else false, with nothing done and {@code held} still the
         * caller's. Never blocks: for the thread that got the registration's answer.
         */
        boolean appendWithoutWaiting(
                PendingProduce pending, int slot, Partition partition, PartitionData data, ByteBuf held, long sequence);
    }

    private final PartitionRouter topics;
    private final TxnRegistrations registrations;
    private final Appender appender;

    TransactionalProduce(PartitionRouter topics, TxnRegistrations registrations, Appender appender) {
        this.topics = topics;
        this.registrations = registrations;
        this.appender = appender;
    }

    /** Handles {@code request} (transactionalId non-null), answering through {@code pending}. */
    void produce(RequestContext context, ProduceRequest request, PendingProduce pending) {
        String id = request.transactionalId();
        long expected = request.transactionSequence(); // v2; -1 (unknown) in v0 and v1
        int slot = 0;
        for (TopicData topicData : request.topicData()) {
            String name = topicData.topic();
            short topicError = topics.prepareForProduce(name);
            for (PartitionData data : topicData.partitions()) {
                int s = slot++;
                Partition partition = topicError != Errors.NONE ? null : topics.leaderPartition(name, data.partition());
                ByteBuf records = data.records();
                if (topicError != Errors.NONE) {
                    pending.complete(s, error(data.partition(), topicError, -1, -1L));
                } else if (partition == null) {
                    pending.complete(s, error(data.partition(), topics.errorFor(name, data.partition()), -1, -1L));
                } else if (records == null
                        || records.readableBytes() < RecordBatchLayout.HEADER_SIZE
                        || RecordBatchLayout.producerId(records, records.readerIndex()) < 0) {
                    // A transactional batch carries a producer id (§6.12); the rest is validated at the append.
                    pending.complete(
                            s,
                            error(
                                    data.partition(),
                                    Errors.INVALID_RECORD,
                                    partition.leaderEpoch(),
                                    partition.logStartOffset()));
                } else if (request.acks() == -1 && partition.inSyncReplicaCount() < partition.minInsyncReplicas()) {
                    pending.complete(s, notEnoughReplicas(partition, data.partition()));
                } else {
                    long pid = RecordBatchLayout.producerId(records, records.readerIndex());
                    short epoch = RecordBatchLayout.producerEpoch(records, records.readerIndex());
                    TransactionPartition tp = new TransactionPartition(name, data.partition());
                    int leaderEpoch = partition.leaderEpoch();
                    long sequence = registrations.cached(pid, epoch, tp, leaderEpoch, expected);
                    ByteBuf held = records.retainedSlice();
                    if (sequence >= 0) {
                        appender.append(pending, s, partition, data, held, sequence);
                        continue;
                    }
                    // Until reported below, later batches of this producer here register too and
                    // so queue behind this one instead of overtaking it (TxnRegistrations, "Order").
                    registrations.registering(pid, tp);
                    registrations
                            .register(id, pid, epoch, tp, leaderEpoch, expected)
                            .whenComplete((seq, e) -> {
                                long result = e != null ? -Errors.BROKER_NOT_AVAILABLE : seq;
                                Runnable notRun = () -> {
                                    held.release();
                                    pending.complete(s, error(data.partition(), Errors.BROKER_NOT_AVAILABLE, -1, -1L));
                                };
                                // On the answering thread when the connection is idle (no pool hop),
                                // else, or when the append must wait, on the pool in order.
                                boolean ran = runHere(context, () -> {
                                    registrations.registered(pid, epoch, tp, leaderEpoch, result);
                                    if (!appender.appendWithoutWaiting(pending, s, partition, data, held, result)) {
                                        inOrder(
                                                context,
                                                () -> appender.append(pending, s, partition, data, held, result),
                                                notRun);
                                    }
                                });
                                if (!ran) {
                                    inOrder(
                                            context,
                                            () -> {
                                                registrations.registered(pid, epoch, tp, leaderEpoch, result);
                                                appender.append(pending, s, partition, data, held, result);
                                            },
                                            () -> {
                                                registrations.registered(pid, epoch, tp, leaderEpoch, result);
                                                notRun.run();
                                            });
                                }
                            });
                }
            }
        }
    }

    /**
     * Runs {@code task} (which must not block) on the calling thread when none of the connection's
     * requests is queued or running on the pool ({@link ConnectionHandler#tryRunInOrderHere}): the
     * connection's order is kept and the hop to the pool saved. False: not run.
     */
    private static boolean runHere(RequestContext context, Runnable task) {
        ConnectionHandler connection =
                context.channel().attr(ConnectionHandler.KEY).get();
        return connection != null && connection.tryRunInOrderHere(task);
    }

    /** Runs {@code task} on the request pool in the connection's order ({@code rejected} when closing). */
    private static void inOrder(RequestContext context, Runnable task, Runnable rejected) {
        ConnectionHandler connection =
                context.channel().attr(ConnectionHandler.KEY).get();
        if (connection == null) {
            task.run(); // a channel without the broker's pipeline (a test)
            return;
        }
        try {
            connection.executeInOrder(task);
        } catch (RejectedExecutionException e) {
            rejected.run();
        }
    }
}
