package io.stellflow.protocol.record;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One record as a consumer sees it ({@code docs/spec/wire-protocol.md} §6.4, §7.4): {@code offset =
 * fetchOffset + baseOffsetDelta + offsetDelta}, {@code timestampMs = baseTimestamp +
 * timestampDelta} (ms since the epoch, CreateTime). key and value are null when sent as null.
 * equals and hashCode compare array contents.
 *
 * <p>The arrays are not copied: treat them as immutable. Thread-safe if not mutated.
 */
public record DecodedRecord(long offset, long timestampMs, byte[] key, byte[] value, List<Header> headers) {
    public DecodedRecord {
        headers = List.copyOf(headers);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DecodedRecord r
                && offset == r.offset
                && timestampMs == r.timestampMs
                && Arrays.equals(key, r.key)
                && Arrays.equals(value, r.value)
                && headers.equals(r.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(offset, timestampMs, Arrays.hashCode(key), Arrays.hashCode(value), headers);
    }

    @Override
    public String toString() {
        return "DecodedRecord[offset=" + offset + ", timestampMs=" + timestampMs + ", key="
                + (key == null ? "null" : key.length + " bytes") + ", value="
                + (value == null ? "null" : value.length + " bytes") + ", headers=" + headers + "]";
    }
}
