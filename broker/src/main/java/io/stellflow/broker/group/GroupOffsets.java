package io.stellflow.broker.group;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.group.GroupRecords.JournalEntry;
import io.stellflow.broker.group.GroupRecords.OffsetValue;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The committed offsets of one group and its offset-change journal (a ring of {@code slots} entries:
 * entry {@code seq} lives in slot {@code seq mod slots}, so the newest {@code slots} changes are
 * kept and compaction bounds the keys). Each mutator applies the change and returns or appends the
 * records that store it.
 *
 * <p>Thread-safety: confined to the shard's thread.
 */
final class GroupOffsets {
    private final String groupId;
    private final JournalEntry[] ring;
    private final Map<TopicPartition, OffsetValue> offsets = new HashMap<>();
    private final TxnOffsets txn;
    private long nextSeq;

    /**
     * @param txn the partition's pending transactional offsets: a plain write or delete of an offset
     *     here drops the pending ones of the same partition ({@link TxnOffsets#supersede})
     */
    GroupOffsets(String groupId, int slots, TxnOffsets txn) {
        this.groupId = groupId;
        this.ring = new JournalEntry[slots];
        this.txn = txn;
    }

    boolean isEmpty() {
        return offsets.isEmpty();
    }

    boolean hasJournal() {
        for (JournalEntry e : ring) {
            if (e != null) {
                return true;
            }
        }
        return false;
    }

    int size() {
        return offsets.size();
    }

    OffsetValue get(TopicPartition tp) {
        return offsets.get(tp);
    }

    /** Every committed partition, in topic then partition order. */
    TreeMap<TopicPartition, OffsetValue> all() {
        TreeMap<TopicPartition, OffsetValue> m =
                new TreeMap<>(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        m.putAll(offsets);
        return m;
    }

    /** Stores {@code v} for {@code tp} and appends its record. */
    void put(TopicPartition tp, OffsetValue v, List<CoordinatorRecord> out) {
        offsets.put(tp, v);
        txn.supersede(groupId, tp);
        out.add(GroupRecords.offset(groupId, tp.topic(), tp.partition(), v));
    }

    /** Deletes the offset of {@code tp} (a tombstone); returns the old value, null when none. */
    OffsetValue remove(TopicPartition tp, List<CoordinatorRecord> out) {
        OffsetValue old = offsets.remove(tp);
        txn.supersede(groupId, tp);
        if (old != null) {
            out.add(GroupRecords.offset(groupId, tp.topic(), tp.partition(), null));
        }
        return old;
    }

    /** Appends one journal entry (the next sequence number) and its record. */
    void journal(
            long timestampMs,
            RequestOrigin origin,
            String memberId,
            TopicPartition tp,
            long oldOffset,
            long newOffset,
            String source,
            List<CoordinatorRecord> out) {
        JournalEntry e = new JournalEntry(
                nextSeq,
                timestampMs,
                origin.principal(),
                origin.clientId(),
                memberId,
                tp.topic(),
                tp.partition(),
                oldOffset,
                newOffset,
                source);
        int slot = (int) (nextSeq % ring.length);
        ring[slot] = e;
        nextSeq++;
        out.add(GroupRecords.journal(groupId, slot, e));
    }

    /** Up to {@code maxEntries} journal entries, newest first. */
    List<JournalEntry> history(int maxEntries) {
        List<JournalEntry> all = new ArrayList<>();
        for (JournalEntry e : ring) {
            if (e != null) {
                all.add(e);
            }
        }
        all.sort(Comparator.comparingLong(JournalEntry::seq).reversed());
        return all.subList(0, Math.min(Math.max(0, maxEntries), all.size()));
    }

    /** Tombstones every offset and journal slot (the group is deleted). */
    void clear(List<CoordinatorRecord> out) {
        for (TopicPartition tp : all().keySet()) {
            remove(tp, out);
        }
        for (int slot = 0; slot < ring.length; slot++) {
            if (ring[slot] != null) {
                ring[slot] = null;
                out.add(GroupRecords.journal(groupId, slot, null));
            }
        }
    }

    /** Every stored record of this group's offsets and journal, for tests and snapshots. */
    void stateRecords(List<CoordinatorRecord> out) {
        all().forEach((tp, v) -> out.add(GroupRecords.offset(groupId, tp.topic(), tp.partition(), v)));
        for (int slot = 0; slot < ring.length; slot++) {
            if (ring[slot] != null) {
                out.add(GroupRecords.journal(groupId, slot, ring[slot]));
            }
        }
    }

    void loadOffset(TopicPartition tp, OffsetValue v) {
        txn.supersede(groupId, tp);
        if (v == null) {
            offsets.remove(tp);
        } else {
            offsets.put(tp, v);
        }
    }

    /**
     * Makes {@code v}, the offset of a committed transaction, the committed offset of {@code tp}
     * (its record is already in the log, before the transaction's COMMIT marker: nothing written).
     */
    void applyTransactional(TopicPartition tp, OffsetValue v) {
        offsets.put(tp, v);
    }

    /**
     * Loads one journal slot. A slot outside the ring (the ring was made smaller) is dropped; the
     * next sequence number continues after the highest loaded one.
     */
    void loadJournal(int slot, JournalEntry e) {
        if (slot < 0 || slot >= ring.length) {
            return;
        }
        ring[slot] = e;
        if (e != null) {
            nextSeq = Math.max(nextSeq, e.seq() + 1);
        }
    }
}
