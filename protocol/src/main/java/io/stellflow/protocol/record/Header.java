package io.stellflow.protocol.record;

import java.util.Arrays;

/**
 * One record header ({@code docs/spec/wire-protocol.md} §7.4): key is a nullable UTF-8 string (at
 * most 32767 bytes), value nullable bytes. equals and hashCode compare the value's content.
 *
 * <p>The value array is not copied: treat it as immutable once built. Thread-safe if not mutated.
 */
public record Header(String key, byte[] value) {
    @Override
    public boolean equals(Object o) {
        return o instanceof Header h && java.util.Objects.equals(key, h.key) && Arrays.equals(value, h.value);
    }

    @Override
    public int hashCode() {
        return 31 * java.util.Objects.hashCode(key) + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
        return "Header[key=" + key + ", value=" + (value == null ? "null" : value.length + " bytes") + "]";
    }
}
