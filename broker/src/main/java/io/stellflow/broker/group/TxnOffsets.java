package io.stellflow.broker.group;

import io.stellflow.broker.group.GroupRecords.OffsetValue;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The transactional offsets of one coordinator partition that wait for their transaction's marker
 * (TxnOffsetCommit, {@code docs/exactly-once.md} "Transactional offset commits"), per producer id:
 * invisible to OffsetFetch, lag and describe until the COMMIT marker applies them; an ABORT drops
 * them.
 *
 * <p>Order rule (the one compaction keeps): every offset record, plain or transactional, has a
 * <em>position</em>, its offset in the partition's log (live: a counter that continues after the
 * load, so the order is the log's). When a committed transaction applies its offset for a (group,
 * partition), the other producers' pending offsets for it written <em>before</em> it are dropped; a
 * plain commit or delete of a (group, partition) drops every pending offset for it (the plain record
 * is later in the log). So the applied value is always that of the latest record of the key among
 * committed and plain ones, which is what a compacted log keeps.
 *
 * <p>Thread-safety: confined to the shard's thread.
 */
final class TxnOffsets {
    /** One pending offset: the (group, partition), its value and its record's position. */
    record Pending(String groupId, TopicPartition tp, OffsetValue value, long position) {}

    private record Key(String groupId, TopicPartition tp) {}

    /** One producer's open transaction here. */
    private static final class Txn {
        short epoch;
        long transactionSequence;
        final LinkedHashMap<Key, Pending> offsets = new LinkedHashMap<>();

        Txn(short epoch, long transactionSequence) {
            this.epoch = epoch;
            this.transactionSequence = transactionSequence;
        }
    }

    private final Map<Long, Txn> byProducer = new HashMap<>();
    private long nextPosition;

    /** Whether some producer's pending offset waits for {@code groupId}'s {@code tp}. */
    boolean hasPending(String groupId, TopicPartition tp) {
        Key k = new Key(groupId, tp);
        for (Txn t : byProducer.values()) {
            if (t.offsets.containsKey(k)) {
                return true;
            }
        }
        return false;
    }

    /** A record at log offset {@code offset} was read during the load: positions continue after it. */
    void observe(long offset) {
        nextPosition = Math.max(nextPosition, offset + 1);
    }

    /** The position of the next record this shard writes. */
    long nextPosition() {
        return nextPosition++;
    }

    /**
     * Whether {@code producerId} at {@code epoch} may add offsets: false for an epoch older than its
     * open transaction's here (a fenced instance).
     */
    boolean epochAllowed(long producerId, short epoch) {
        Txn t = byProducer.get(producerId);
        return t == null || epoch >= t.epoch;
    }

    /**
     * Adds a pending offset of {@code producerId}'s transaction. A higher epoch than the open one's
     * starts over (the coordinator aborted the older transaction under a bumped epoch).
     *
     * @param transactionSequence the transaction's sequence (-1 unknown, as in a replay before its
     *     BEGIN marker was read)
     */
    void add(
            long producerId,
            short epoch,
            long transactionSequence,
            String groupId,
            TopicPartition tp,
            OffsetValue value,
            long position) {
        Txn t = byProducer.get(producerId);
        if (t == null || epoch > t.epoch) {
            t = new Txn(epoch, transactionSequence);
            byProducer.put(producerId, t);
        }
        t.transactionSequence = Math.max(t.transactionSequence, transactionSequence);
        Key k = new Key(groupId, tp);
        t.offsets.remove(k); // keep write order: the later write of the key is the one applied
        t.offsets.put(k, new Pending(groupId, tp, value, position));
    }

    /** A BEGIN marker of {@code producerId} was read: its transaction's sequence. */
    void begin(long producerId, short epoch, long transactionSequence) {
        Txn t = byProducer.get(producerId);
        if (t == null || epoch > t.epoch) {
            byProducer.put(producerId, new Txn(epoch, transactionSequence));
        } else {
            t.transactionSequence = Math.max(t.transactionSequence, transactionSequence);
        }
    }

    /**
     * A COMMIT or ABORT marker of {@code producerId} (epoch {@code epoch}, transaction {@code
     * transactionSequence}, -1 unknown) closes its transaction here. A marker of an earlier
     * transaction than the open one (a late notification after a reload) changes nothing. A COMMIT of
     * a later transaction than the pending offsets' drops them instead of applying them: they were
     * written after their own transaction had ended (a TxnOffsetCommit that raced its EndTransaction),
     * and the transaction that committed never included them.
     *
     * @return the offsets to apply, in write order: empty for an abort or when nothing was pending;
     *     each applied offset has already dropped the other producers' older pending offsets of its
     *     key
     */
    List<Pending> complete(long producerId, short epoch, long transactionSequence, boolean commit) {
        Txn t = byProducer.get(producerId);
        boolean known = transactionSequence >= 0 && t != null && t.transactionSequence >= 0;
        if (t == null || epoch < t.epoch || (known && transactionSequence < t.transactionSequence)) {
            return List.of();
        }
        byProducer.remove(producerId);
        if (!commit || t.offsets.isEmpty() || (known && transactionSequence > t.transactionSequence)) {
            return List.of();
        }
        List<Pending> applied = new ArrayList<>(t.offsets.values());
        for (Pending p : applied) {
            dropOlder(new Key(p.groupId(), p.tp()), p.position());
        }
        return applied;
    }

    /** A plain commit or delete of {@code groupId}'s {@code tp}: every pending offset of it is older. */
    void supersede(String groupId, TopicPartition tp) {
        if (!byProducer.isEmpty()) {
            dropOlder(new Key(groupId, tp), Long.MAX_VALUE);
        }
    }

    private void dropOlder(Key k, long position) {
        Iterator<Txn> it = byProducer.values().iterator();
        while (it.hasNext()) {
            Txn t = it.next();
            Pending p = t.offsets.get(k);
            if (p != null && p.position() < position) {
                t.offsets.remove(k);
            }
        }
    }
}
