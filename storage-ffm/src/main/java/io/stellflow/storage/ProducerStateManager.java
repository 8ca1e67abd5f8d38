package io.stellflow.storage;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One partition's idempotent-producer state: per producer id its epoch and its last {@value
 * #BATCHES_PER_PRODUCER} appended batches (base and last sequence, base and last offset), and when
 * it last appended. Rules of {@code docs/spec/wire-protocol.md} §6.12, checked on the leader by
 * {@link #check} before an append and applied by {@link #update} after it, on leaders, on
 * followers (each replicated batch) and when the log is replayed at open:
 *
 * <ul>
 *   <li>the first batch of a producer id new to the partition starts at sequence 0;
 *   <li>a batch whose sequences equal one of the last 5 of the same epoch is a retry ({@link
 *       #DUPLICATE}; the caller compares its content with the remembered batch's digest, or while
 *       that is not known yet with the stored batch, before answering with the original offset);
 *   <li>any other batch must start right after the last one's last sequence (sequences wrap from
 *       {@link Integer#MAX_VALUE} to 0), else {@link #OUT_OF_ORDER_SEQUENCE};
 *   <li>a lower epoch is {@link #INVALID_PRODUCER_EPOCH}; a higher one starts the producer afresh
 *       (its first sequence must be 0).
 * </ul>
 *
 * <p>Producer ids expire {@code producer.id.expiration.ms} after their last append (wall clock of
 * the append on the broker that appended; the time of the replay when rebuilt from the log, never
 * the producer's own timestamps),
 * never by log position: retention and log-start moves keep the state. At most {@code
 * maxProducerIds} ids are kept; a new id beyond that (after expiring what is due) is {@link
 * #TOO_MANY_PRODUCER_IDS}. Every entry also counts in the broker's {@link BrokerProducerIds}
 * (changed only when an entry is created, expired, cleared or loaded, so the check of a known
 * producer costs nothing more); while that is at {@code producer.id.max.per.broker} a new id is
 * {@link #TOO_MANY_PRODUCER_IDS_ON_BROKER}. Only {@link #check} refuses: {@link #update} and the
 * markers (followers, replay) always record.
 *
 * <p>Transactions ({@code docs/exactly-once.md}, "Markers"): a BEGIN control batch ({@link
 * #beginTransaction}) opens a transaction of its producer id at the marker's offset; a COMMIT or
 * ABORT ({@link #endTransaction}) closes it. Per producer id at most one transaction is open; the
 * smallest first offset of the open ones is {@link #firstUnstableOffset}, from which the last
 * stable offset follows. A producer id with an open transaction never expires.
 *
 * <p>Thread-safety: guarded by the owning log's write lock.
 */
public final class ProducerStateManager {
    /** Batches remembered per producer id, as Kafka's producers keep at most 5 requests in flight. */
    public static final int BATCHES_PER_PRODUCER = 5;

    /** {@link #check}: a new batch in order; append it. */
    public static final int APPEND = 0;

    /** {@link #check}: the sequences of a remembered batch ({@link #duplicateBaseOffset()}). */
    public static final int DUPLICATE = 1;

    /** {@link #check}: a gap or an overlap in the sequences (OUT_OF_ORDER_SEQUENCE_NUMBER, 22). */
    public static final int OUT_OF_ORDER_SEQUENCE = 2;

    /** {@link #check}: an epoch lower than the producer's (INVALID_PRODUCER_EPOCH, 21). */
    public static final int INVALID_PRODUCER_EPOCH = 3;

    /** {@link #check}: a new producer id while {@code maxProducerIds} are live. */
    public static final int TOO_MANY_PRODUCER_IDS = 4;

    /**
     * {@link #check}: a new producer id while the broker's logs keep {@code
     * producer.id.max.per.broker} ids together ({@link BrokerProducerIds}).
     */
    public static final int TOO_MANY_PRODUCER_IDS_ON_BROKER = 5;

    /** {@link #firstUnstableOffset} when no transaction is open. */
    public static final long NO_OPEN_TRANSACTION = Long.MAX_VALUE;

    /** A remembered batch whose content digest is not known yet ({@link LogProducerState#contentDigest}). */
    public static final long NO_DIGEST = 0;

    private final Map<Long, Entry> producers = new HashMap<>();

    /**
     * First offset -&gt; producer id of every open transaction (BEGIN offsets are distinct). Boxed,
     * but touched once per transaction and partition, never per batch.
     */
    private final TreeMap<Long, Long> open = new TreeMap<>();

    private final long expirationMs;
    private final int maxProducerIds;
    private final BrokerProducerIds broker;
    private long duplicateBaseOffset = -1;
    private long duplicateLastOffset = -1;
    private long duplicateDigest = NO_DIGEST;

    /**
     * @param expirationMs {@code producer.id.expiration.ms}: an id with no append for this long is forgotten
     * @param maxProducerIds most producer ids kept for the partition (&gt; 0)
     */
    public ProducerStateManager(long expirationMs, int maxProducerIds) {
        this(expirationMs, maxProducerIds, new BrokerProducerIds(Long.MAX_VALUE));
    }

    /**
     * @param expirationMs {@code producer.id.expiration.ms}: an id with no append for this long is forgotten
     * @param maxProducerIds most producer ids kept for the partition (&gt; 0)
     * @param broker the count of every log of the broker, bounded by {@code producer.id.max.per.broker}
     */
    public ProducerStateManager(long expirationMs, int maxProducerIds, BrokerProducerIds broker) {
        if (expirationMs <= 0 || maxProducerIds <= 0) {
            throw new IllegalArgumentException("producer.id.expiration.ms " + expirationMs + " and max producer ids "
                    + maxProducerIds + " must be > 0");
        }
        this.expirationMs = expirationMs;
        this.maxProducerIds = maxProducerIds;
        this.broker = java.util.Objects.requireNonNull(broker, "broker");
    }

    /**
     * Checks a batch a leader is about to append; changes nothing but, when the partition or the
     * broker is full, expires this partition's ids idle for {@code producer.id.expiration.ms} at
     * {@code nowMs}.
     *
     * @return {@link #APPEND}, {@link #DUPLICATE}, {@link #OUT_OF_ORDER_SEQUENCE}, {@link
     *     #INVALID_PRODUCER_EPOCH}, {@link #TOO_MANY_PRODUCER_IDS} or {@link
     *     #TOO_MANY_PRODUCER_IDS_ON_BROKER}
     */
    public int check(long producerId, short epoch, int baseSequence, int lastSequence, long nowMs) {
        Entry e = producers.get(producerId);
        if (e == null) {
            if (producers.size() >= maxProducerIds || broker.full()) {
                removeExpired(nowMs);
                if (producers.size() >= maxProducerIds) {
                    return TOO_MANY_PRODUCER_IDS;
                }
                if (broker.full()) {
                    return TOO_MANY_PRODUCER_IDS_ON_BROKER;
                }
            }
            return baseSequence == 0 ? APPEND : OUT_OF_ORDER_SEQUENCE;
        }
        if (epoch < e.epoch) {
            return INVALID_PRODUCER_EPOCH;
        }
        if (epoch > e.epoch || e.count == 0) {
            // A new epoch, or a producer known only from a marker: its sequences start at 0.
            return baseSequence == 0 ? APPEND : OUT_OF_ORDER_SEQUENCE;
        }
        for (int i = 0; i < e.count; i++) {
            if (e.baseSequence[i] == baseSequence && e.lastSequence[i] == lastSequence) {
                duplicateBaseOffset = e.baseOffset[i];
                duplicateLastOffset = e.lastOffset[i];
                duplicateDigest = e.digest[i];
                return DUPLICATE;
            }
        }
        return baseSequence == sequenceAfter(e.lastSequence[e.count - 1]) ? APPEND : OUT_OF_ORDER_SEQUENCE;
    }

    /** After {@link #check} answered {@link #DUPLICATE}: the remembered batch's base offset. */
    public long duplicateBaseOffset() {
        return duplicateBaseOffset;
    }

    /** After {@link #check} answered {@link #DUPLICATE}: the remembered batch's last offset. */
    public long duplicateLastOffset() {
        return duplicateLastOffset;
    }

    /**
     * After {@link #check} answered {@link #DUPLICATE}: the remembered batch's content digest, {@link
     * #NO_DIGEST} when not taken yet (then the stored batch is still in the log: compare with it).
     */
    public long duplicateDigest() {
        return duplicateDigest;
    }

    /**
     * Sets the content digest of every remembered batch that has none and starts below {@code
     * belowOffset}, asking {@code source} (which answers {@link #NO_DIGEST} for a batch it cannot
     * read). Called before such batches can leave the log (retention, compaction).
     *
     * @return how many digests were set
     */
    int captureDigests(long belowOffset, DigestSource source) throws IOException {
        int set = 0;
        for (Entry e : producers.values()) {
            for (int i = 0; i < e.count; i++) {
                if (e.digest[i] == NO_DIGEST && e.baseOffset[i] < belowOffset) {
                    e.digest[i] = source.digestOf(e.baseOffset[i]);
                    set += e.digest[i] == NO_DIGEST ? 0 : 1;
                }
            }
        }
        return set;
    }

    /** Where {@link #captureDigests} gets a stored batch's digest. */
    @FunctionalInterface
    interface DigestSource {
        /** The content digest of the stored batch at {@code baseOffset}, {@link #NO_DIGEST} if unreadable. */
        long digestOf(long baseOffset) throws IOException;
    }

    /**
     * Records an appended batch (leader after {@link #check}, follower, replay): a new or higher
     * epoch starts the producer afresh; the oldest of more than {@value #BATCHES_PER_PRODUCER}
     * batches is forgotten.
     */
    public void update(
            long producerId,
            short epoch,
            int baseSequence,
            int lastSequence,
            long baseOffset,
            long lastOffset,
            long timestampMs) {
        Entry e = producers.get(producerId);
        if (e == null) {
            e = new Entry(producerId, epoch);
            producers.put(producerId, e);
            broker.added(1);
        } else if (e.epoch != epoch) {
            e.epoch = epoch;
            e.count = 0;
        }
        e.add(baseSequence, lastSequence, baseOffset, lastOffset);
        e.lastUpdateMs = Math.max(e.lastUpdateMs, timestampMs);
    }

    /** Forgets producer ids idle for {@code producer.id.expiration.ms} at {@code nowMs}; returns how many. */
    public int removeExpired(long nowMs) {
        int removed = 0;
        for (Iterator<Entry> it = producers.values().iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (e.txnFirstOffset < 0 && nowMs - e.lastUpdateMs >= expirationMs) {
                it.remove();
                removed++;
            }
        }
        broker.removed(removed);
        return removed;
    }

    /**
     * The base offset of every known producer's newest batch, ascending: the batches compaction keeps
     * whole ({@link LogCleaner}), so the producer's next batch and a retry of its last one are still
     * checked against the stored batch, on this replica and on one that copies the compacted log.
     */
    long[] lastBatchBaseOffsets() {
        long[] bases = new long[producers.size()];
        int n = 0;
        for (Entry e : producers.values()) {
            if (e.count > 0) {
                bases[n++] = e.baseOffset[e.count - 1];
            }
        }
        long[] out = Arrays.copyOf(bases, n);
        Arrays.sort(out);
        return out;
    }

    /**
     * Forgets every producer (before a reload from a snapshot and the log, and when the log closes:
     * its entries leave the broker's count).
     */
    public void clear() {
        broker.removed(producers.size());
        producers.clear();
        open.clear();
    }

    /**
     * A BEGIN marker at {@code offset}: opens a transaction of {@code producerId} there (a new or
     * higher epoch first starts the producer afresh, its next sequence 0). A producer whose
     * transaction is already open keeps it (the leader writes no second BEGIN).
     */
    public void beginTransaction(
            long producerId, short epoch, long offset, long transactionSequence, long timestampMs) {
        Entry e = producers.get(producerId);
        if (e == null) {
            e = new Entry(producerId, epoch);
            producers.put(producerId, e);
            broker.added(1);
        } else if (epoch > e.epoch) {
            e.epoch = epoch;
            e.count = 0;
        }
        if (e.txnFirstOffset < 0) {
            e.txnFirstOffset = offset;
            e.txnSequence = transactionSequence;
            open.put(offset, producerId);
        }
        e.lastUpdateMs = Math.max(e.lastUpdateMs, timestampMs);
    }

    /**
     * A COMMIT or ABORT marker of {@code producerId}: closes its open transaction and remembers
     * the highest {@code coordinatorEpoch} seen. A marker of a higher epoch also moves the producer
     * to it (next sequence 0).
     *
     * @return the first offset of the transaction it closed, or -1 when none was open (a repeated
     *     marker: nothing changes)
     */
    public long endTransaction(long producerId, short epoch, int coordinatorEpoch, long timestampMs) {
        Entry e = producers.get(producerId);
        if (e == null) {
            return -1;
        }
        e.coordinatorEpoch = Math.max(e.coordinatorEpoch, coordinatorEpoch);
        if (epoch > e.epoch) {
            e.epoch = epoch;
            e.count = 0;
        }
        e.lastUpdateMs = Math.max(e.lastUpdateMs, timestampMs);
        long first = e.txnFirstOffset;
        if (first >= 0) {
            open.remove(first);
            e.txnFirstOffset = -1;
            e.txnSequence = -1;
        }
        return first;
    }

    /** The first offset of {@code producerId}'s open transaction, or -1 when none is open. */
    public long openTransactionFirstOffset(long producerId) {
        Entry e = producers.get(producerId);
        return e == null ? -1 : e.txnFirstOffset;
    }

    /** The highest coordinatorEpoch of {@code producerId}'s COMMIT/ABORT markers, -1 if none. */
    public int coordinatorEpoch(long producerId) {
        Entry e = producers.get(producerId);
        return e == null ? -1 : e.coordinatorEpoch;
    }

    /** The transactionSequence of {@code producerId}'s open transaction, or -1 when none is open. */
    public long openTransactionSequence(long producerId) {
        Entry e = producers.get(producerId);
        return e == null || e.txnFirstOffset < 0 ? -1 : e.txnSequence;
    }

    /** Open transactions. */
    public int openTransactions() {
        return open.size();
    }

    /**
     * The smallest first offset of an open transaction, {@link #NO_OPEN_TRANSACTION} when none is
     * open: the last stable offset is the minimum of this and the high watermark.
     */
    public long firstUnstableOffset() {
        return open.isEmpty() ? NO_OPEN_TRANSACTION : open.firstKey();
    }

    /** Producer ids kept. */
    public int size() {
        return producers.size();
    }

    /** The epoch of {@code producerId}, or -1 when it is not known. */
    public short epoch(long producerId) {
        Entry e = producers.get(producerId);
        return e == null ? -1 : e.epoch;
    }

    /** The next sequence expected from {@code producerId} in its epoch, or -1 when it is not known. */
    public int nextSequence(long producerId) {
        Entry e = producers.get(producerId);
        return e == null ? -1 : e.count == 0 ? 0 : sequenceAfter(e.lastSequence[e.count - 1]);
    }

    /** Every producer id's state, ascending by producer id (DescribeProducers). */
    public List<ActiveProducer> activeProducers() {
        List<ActiveProducer> list = new ArrayList<>(producers.size());
        for (Entry e : producers.values()) {
            list.add(new ActiveProducer(
                    e.producerId,
                    e.epoch,
                    e.count == 0 ? -1 : e.lastSequence[e.count - 1],
                    e.lastUpdateMs == Long.MIN_VALUE ? -1 : e.lastUpdateMs,
                    e.coordinatorEpoch,
                    e.txnFirstOffset,
                    e.txnFirstOffset < 0 ? -1 : e.txnSequence));
        }
        list.sort((a, b) -> Long.compare(a.producerId(), b.producerId()));
        return list;
    }

    /** A copy of every entry, ascending by producer id (for snapshots and tests). */
    List<Entry> entries() {
        List<Entry> list = new ArrayList<>(producers.size());
        for (Entry e : producers.values()) {
            list.add(e.copy());
        }
        list.sort((a, b) -> Long.compare(a.producerId, b.producerId));
        return list;
    }

    /** Replaces the content with {@code entries} (a snapshot read back). */
    void load(List<Entry> entries) {
        clear();
        for (Entry e : entries) {
            if (producers.put(e.producerId, e.copy()) == null) {
                broker.added(1);
            }
            if (e.txnFirstOffset >= 0) {
                open.put(e.txnFirstOffset, e.producerId);
            }
        }
    }

    /** The sequence after {@code lastSequence}: sequences wrap from Integer.MAX_VALUE to 0. */
    static int sequenceAfter(int lastSequence) {
        return lastSequence == Integer.MAX_VALUE ? 0 : lastSequence + 1;
    }

    /** The last sequence of a batch of {@code recordCount} records starting at {@code baseSequence}. */
    public static int lastSequence(int baseSequence, int recordCount) {
        long last = (long) baseSequence + recordCount - 1;
        return (int) (last > Integer.MAX_VALUE ? last - Integer.MAX_VALUE - 1 : last);
    }

    /** One producer id's state; oldest batch first. Confined like the manager. */
    static final class Entry {
        final long producerId;
        short epoch;
        long lastUpdateMs = Long.MIN_VALUE;
        /** First offset (its BEGIN marker's) of the open transaction, -1 when none is open. */
        long txnFirstOffset = -1;
        /** The open transaction's transactionSequence, -1 when none is open. */
        long txnSequence = -1;

        /** The highest coordinatorEpoch of the producer's COMMIT/ABORT markers, -1 if none. */
        int coordinatorEpoch = -1;

        int count;
        final int[] baseSequence = new int[BATCHES_PER_PRODUCER];
        final int[] lastSequence = new int[BATCHES_PER_PRODUCER];
        final long[] baseOffset = new long[BATCHES_PER_PRODUCER];
        final long[] lastOffset = new long[BATCHES_PER_PRODUCER];
        /** Content digests ({@link LogProducerState#contentDigest}), {@link #NO_DIGEST} while unknown. */
        final long[] digest = new long[BATCHES_PER_PRODUCER];

        Entry(long producerId, short epoch) {
            this.producerId = producerId;
            this.epoch = epoch;
        }

        void add(int baseSeq, int lastSeq, long base, long last) {
            add(baseSeq, lastSeq, base, last, NO_DIGEST);
        }

        void add(int baseSeq, int lastSeq, long base, long last, long contentDigest) {
            if (count == BATCHES_PER_PRODUCER) {
                // Five entries: shifting 4 of each array is cheaper than ring arithmetic everywhere.
                System.arraycopy(baseSequence, 1, baseSequence, 0, count - 1);
                System.arraycopy(lastSequence, 1, lastSequence, 0, count - 1);
                System.arraycopy(baseOffset, 1, baseOffset, 0, count - 1);
                System.arraycopy(lastOffset, 1, lastOffset, 0, count - 1);
                System.arraycopy(digest, 1, digest, 0, count - 1);
                count--;
            }
            baseSequence[count] = baseSeq;
            lastSequence[count] = lastSeq;
            baseOffset[count] = base;
            lastOffset[count] = last;
            digest[count] = contentDigest;
            count++;
        }

        Entry copy() {
            Entry c = new Entry(producerId, epoch);
            c.lastUpdateMs = lastUpdateMs;
            c.txnFirstOffset = txnFirstOffset;
            c.txnSequence = txnSequence;
            c.coordinatorEpoch = coordinatorEpoch;
            c.count = count;
            System.arraycopy(baseSequence, 0, c.baseSequence, 0, count);
            System.arraycopy(lastSequence, 0, c.lastSequence, 0, count);
            System.arraycopy(baseOffset, 0, c.baseOffset, 0, count);
            System.arraycopy(lastOffset, 0, c.lastOffset, 0, count);
            System.arraycopy(digest, 0, c.digest, 0, count);
            return c;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e
                    && producerId == e.producerId
                    && epoch == e.epoch
                    && lastUpdateMs == e.lastUpdateMs
                    && txnFirstOffset == e.txnFirstOffset
                    && txnSequence == e.txnSequence
                    && coordinatorEpoch == e.coordinatorEpoch
                    && count == e.count
                    && Arrays.equals(baseSequence, 0, count, e.baseSequence, 0, count)
                    && Arrays.equals(lastSequence, 0, count, e.lastSequence, 0, count)
                    && Arrays.equals(baseOffset, 0, count, e.baseOffset, 0, count)
                    && Arrays.equals(lastOffset, 0, count, e.lastOffset, 0, count)
                    && Arrays.equals(digest, 0, count, e.digest, 0, count);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(producerId) * 31 + epoch;
        }

        @Override
        public String toString() {
            return "Producer{id=" + producerId + ", epoch=" + epoch + ", batches=" + count + ", lastSeq="
                    + (count == 0 ? -1 : lastSequence[count - 1]) + ", txnFirstOffset=" + txnFirstOffset + "}";
        }
    }
}
