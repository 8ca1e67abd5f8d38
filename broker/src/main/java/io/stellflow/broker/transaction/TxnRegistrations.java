package io.stellflow.broker.transaction;

import io.stellflow.broker.coordinator.CoordinatorException;
import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.RegisterTxnPartitionRequest;
import io.stellflow.protocol.message.RegisterTxnPartitionResponse;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The partition leader's registrations of its partitions in transactions (RegisterTxnPartition,
 * {@code docs/exactly-once.md} "Partition registration"): before the first transactional batch of a
 * producer in a partition, the leader asks the transaction's coordinator (a call into this broker's
 * {@link TransactionCoordinator} when it leads the id's {@code __transaction_state} partition, else
 * apiKey 29 over {@link BrokerRequests} to the leader of that partition), which answers the
 * transaction's sequence. The answer is kept per (producer id, partition) with the epoch and the
 * partition's leader epoch, so later batches of the same transaction append without a round trip;
 * it is forgotten when a marker for the producer is written here ({@link #forget}), so the first
 * batch of the next transaction registers again.
 *
 * <p><b>Order.</b> A producer keeps several Produce requests of a partition in flight, and a cache
 * hit appends at once: it must never overtake an earlier batch of the same producer and partition
 * still waiting for its registration, or the log refuses it ({@code OUT_OF_ORDER_SEQUENCE_NUMBER})
 * and the client retries after its back-off ({@code retry.backoff.ms}, 100 ms by default) in the
 * middle of the transaction. So the Produce path announces each registration ({@link #registering})
 * before sending it and reports its answer ({@link #registered}) in the connection's order right
 * before the batch's append; while one is announced and not reported, {@link #cached} misses, so a
 * later batch registers too and, since the coordinator answers one producer's registrations in the
 * order it got them, is appended behind the earlier one. {@link #register} itself caches nothing.
 *
 * <p>Results: the sequence (&gt;= 0), or the negated Produce error code: the coordinator's {@code
 * INVALID_TXN_STATE} (no ONGOING transaction), {@code INVALID_PRODUCER_EPOCH} (an older epoch: a
 * fenced producer), {@code INVALID_REQUEST}; {@code BROKER_NOT_AVAILABLE} (retriable) when the
 * coordinator cannot be reached or is not ready (no leader, loading, moved, timed out).
 *
 * <p>The cache is bounded: at most {@value #MAX_CACHED} registrations, the oldest evicted first.
 * Eviction is always safe, because the cache is only a shortcut: a miss registers again, and the
 * coordinator answers a partition already registered in the ONGOING transaction with the same
 * sequence without writing anything, so an evicted entry costs one registration round trip on its
 * producer's next batch there and changes no outcome.
 *
 * <p>Thread-safety: any thread; futures complete on the coordinator's or the client's thread.
 */
public final class TxnRegistrations {
    private record Key(long producerId, String topic, int partition) {}

    private record Registered(short epoch, int leaderEpoch, long sequence) {}

    /**
     * Registrations kept by default: about 120 bytes each (key, value, map entry), so at most about
     * 12 MB; enough for 1,000 producers each in a transaction over 100 partitions led here.
     */
    public static final int MAX_CACHED = 100_000;

    private final int brokerId;
    private final TransactionCoordinator coordinator;
    private final Supplier<MetadataImage> image;
    private final Supplier<BrokerRequests> requests;

    /** Insertion order: the eldest registration is evicted first. Guarded by itself. */
    private final LinkedHashMap<Key, Registered> registered;

    /** Registrations announced and not yet reported, per key ({@link #registering}). Guarded by {@link #registered}. */
    private final HashMap<Key, int[]> inFlight = new HashMap<>();

    /**
     * @param brokerId this broker's id
     * @param coordinator this broker's transaction coordinator
     * @param image the latest metadata image (the leader of each {@code __transaction_state} partition)
     * @param requests the client for a remote coordinator
     */
    public TxnRegistrations(
            int brokerId,
            TransactionCoordinator coordinator,
            Supplier<MetadataImage> image,
            Supplier<BrokerRequests> requests) {
        this(brokerId, coordinator, image, requests, MAX_CACHED);
    }

    /** With at most {@code maxCached} registrations kept (tests). */
    TxnRegistrations(
            int brokerId,
            TransactionCoordinator coordinator,
            Supplier<MetadataImage> image,
            Supplier<BrokerRequests> requests,
            int maxCached) {
        if (maxCached < 1) {
            throw new IllegalArgumentException("maxCached must be >= 1: " + maxCached);
        }
        this.brokerId = brokerId;
        this.coordinator = coordinator;
        this.image = image;
        this.requests = requests;
        this.registered = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, Registered> eldest) {
                return size() > maxCached;
            }
        };
    }

    /** Registrations cached now (tests). */
    int cachedCount() {
        synchronized (registered) {
            return registered.size();
        }
    }

    /**
     * The sequence under which {@code partition} (led here at {@code leaderEpoch}) is registered for
     * the producer at {@code epoch}, or -1 when it must register first (never registered, forgotten
     * after a marker, evicted, or a registration of the producer's partition announced and not yet
     * reported: see "Order" above). For a Produce without a transaction sequence (v0, v1).
     */
    public long cached(long producerId, short epoch, TransactionPartition partition, int leaderEpoch) {
        return cached(producerId, epoch, partition, leaderEpoch, -1L);
    }

    /**
     * As {@link #cached(long, short, TransactionPartition, int)} for a Produce v2 that carries {@code
     * expectedSequence} (-1 when unknown): a registration of another sequence is a miss, so the
     * coordinator decides (it refuses a Produce of an earlier transaction).
     */
    public long cached(
            long producerId, short epoch, TransactionPartition partition, int leaderEpoch, long expectedSequence) {
        Key key = new Key(producerId, partition.topic(), partition.partition());
        Registered r;
        synchronized (registered) {
            r = inFlight.containsKey(key) ? null : registered.get(key);
        }
        return r != null
                        && r.epoch == epoch
                        && r.leaderEpoch == leaderEpoch
                        && (expectedSequence < 0 || expectedSequence == r.sequence)
                ? r.sequence
                : -1;
    }

    /**
     * Registers {@code partition} at the coordinator of {@code transactionalId}; see the class comment.
     *
     * @param expectedSequence the transaction sequence the Produce carries (v2), or -1 when unknown
     *     (v0, v1): the coordinator answers {@code INVALID_TXN_STATE} when it is not the ONGOING one
     */
    public CompletableFuture<Long> register(
            String transactionalId,
            long producerId,
            short epoch,
            TransactionPartition partition,
            int leaderEpoch,
            long expectedSequence) {
        int p = coordinator.partitionOf(transactionalId);
        if (p < 0) {
            return CompletableFuture.completedFuture((long) -Errors.BROKER_NOT_AVAILABLE);
        }
        TopicImage topic = image.get().topic(TransactionStateTopic.NAME);
        PartitionImage state = topic == null ? null : topic.partition(p);
        int leader = state == null ? PartitionImage.NO_LEADER : state.leader();
        CompletableFuture<Long> answer;
        if (leader == PartitionImage.NO_LEADER) {
            return CompletableFuture.completedFuture((long) -Errors.BROKER_NOT_AVAILABLE);
        } else if (leader == brokerId) {
            answer = coordinator
                    .registerPartition(transactionalId, producerId, epoch, expectedSequence, partition)
                    .handle((r, e) -> e != null
                            ? -(long) CoordinatorException.errorCodeOf(e)
                            : r.errorCode() == Errors.NONE ? r.transactionSequence() : -(long) r.errorCode());
        } else {
            RegisterTxnPartitionRequest request = new RegisterTxnPartitionRequest(
                    transactionalId, producerId, epoch, expectedSequence, partition.topic(), partition.partition());
            answer = requests.get()
                    .send(
                            leader,
                            ApiKeys.REGISTER_TXN_PARTITION,
                            (short) 0,
                            request,
                            RegisterTxnPartitionResponse::read)
                    .handle((r, e) -> e != null
                            ? -(long) Errors.BROKER_NOT_AVAILABLE
                            : r.errorCode() == Errors.NONE ? r.transactionSequence() : -(long) r.errorCode());
        }
        return answer.thenApply(sequence -> {
            if (sequence >= 0) {
                return sequence; // the caller remembers it once its batch is queued (see remember)
            }
            short code = (short) -sequence;
            return switch (code) {
                case Errors.INVALID_TXN_STATE,
                        Errors.INVALID_PRODUCER_EPOCH,
                        Errors.PRODUCER_FENCED,
                        Errors.INVALID_REQUEST -> sequence;
                default -> (long) -Errors.BROKER_NOT_AVAILABLE; // not coordinated, loading, unreachable: retriable
            };
        });
    }

    /**
     * Announces a registration of {@code partition} for the producer that the caller is about to
     * send ({@link #register}): until its {@link #registered} report, {@link #cached} misses for
     * them. Each call must be matched by exactly one {@link #registered}, whatever the outcome.
     */
    public void registering(long producerId, TransactionPartition partition) {
        Key key = new Key(producerId, partition.topic(), partition.partition());
        synchronized (registered) {
            inFlight.computeIfAbsent(key, k -> new int[1])[0]++;
        }
    }

    /**
     * Reports the answer of an announced registration ({@link #registering}), in the connection's
     * order and before the batch's append: {@code sequence} &gt;= 0 is cached (with {@code epoch} and
     * {@code leaderEpoch}), a negated code only ends the announcement.
     */
    public void registered(
            long producerId, short epoch, TransactionPartition partition, int leaderEpoch, long sequence) {
        Key key = new Key(producerId, partition.topic(), partition.partition());
        synchronized (registered) {
            int[] n = inFlight.get(key);
            if (n == null) {
                throw new IllegalStateException("no registration of " + key + " was announced");
            }
            if (--n[0] == 0) {
                inFlight.remove(key);
            }
            if (sequence >= 0) {
                remember(producerId, epoch, partition, leaderEpoch, sequence);
            }
        }
    }

    /** Registrations announced and not yet reported (tests). */
    int inFlightCount() {
        synchronized (registered) {
            int total = 0;
            for (int[] n : inFlight.values()) {
                total += n[0];
            }
            return total;
        }
    }

    /** Caches a registration the coordinator answered (evicting the eldest beyond the bound). */
    void remember(long producerId, short epoch, TransactionPartition partition, int leaderEpoch, long sequence) {
        Key key = new Key(producerId, partition.topic(), partition.partition());
        Registered value = new Registered(epoch, leaderEpoch, sequence);
        synchronized (registered) {
            registered.put(key, value);
        }
    }

    /** A marker for {@code producerId} is being written to {@code partition}: its next batch registers again. */
    public void forget(long producerId, TransactionPartition partition) {
        Key key = new Key(producerId, partition.topic(), partition.partition());
        synchronized (registered) {
            registered.remove(key);
        }
    }
}
