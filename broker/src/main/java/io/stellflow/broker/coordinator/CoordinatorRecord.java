package io.stellflow.broker.coordinator;

import java.util.Objects;

/**
 * One record of a coordinator partition ({@code __consumer_offsets}, later {@code
 * __transaction_state}): the key and value bytes exactly as stored in the record's key and value
 * fields. The layouts are the shard's (for groups: {@code io.stellflow.broker.group.GroupRecords});
 * the runtime only moves the bytes.
 *
 * @param key the record key, never null (compaction keeps the last record per key)
 * @param value the record value, or null for a tombstone (the key's state is deleted)
 *     <p>Immutable once built: callers must not change the arrays after handing them over.
 */
public record CoordinatorRecord(byte[] key, byte[] value) {
    public CoordinatorRecord {
        Objects.requireNonNull(key, "key");
    }

    /** True when this record deletes its key's state. */
    public boolean isTombstone() {
        return value == null;
    }
}
