package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.transaction.TransactionRecords.Decoded;
import io.stellflow.broker.transaction.TransactionRecords.TransactionValue;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class TransactionRecordsTest {
    private static final HexFormat HEX = HexFormat.of();

    private static TransactionValue example() {
        return new TransactionValue(
                1000,
                (short) 2,
                TransactionState.ONGOING,
                60_000,
                3,
                1000,
                1500,
                new TreeSet<>(Set.of(new TransactionPartition("t", 1), new TransactionPartition("t", 0))));
    }

    @Test
    void theJavadocWorkedExampleIsByteExact() {
        CoordinatorRecord r = TransactionRecords.record("tx", example());
        assertThat(HEX.formatHex(r.key())).isEqualTo("0000" + "00027478");
        assertThat(HEX.formatHex(r.value()))
                .isEqualTo("0000" + "00000000000003e8" + "0002" + "01" + "0000ea60" + "0000000000000003"
                        + "00000000000003e8" + "00000000000005dc"
                        + "00000001" + "000174" + "00000002" + "00000000" + "00000001");
    }

    @Test
    void everyStateAndSeveralTopicsRoundTrip() {
        for (TransactionState s : TransactionState.values()) {
            TransactionValue v = new TransactionValue(
                    Long.MAX_VALUE,
                    Short.MAX_VALUE,
                    s,
                    Integer.MAX_VALUE,
                    Long.MAX_VALUE,
                    -1,
                    0,
                    new TreeSet<>(Set.of(
                            new TransactionPartition("b", 7),
                            new TransactionPartition("a", 0),
                            new TransactionPartition("é", 3),
                            new TransactionPartition("a", 2))));
            CoordinatorRecord r = TransactionRecords.record("id-ü", v);
            Decoded d = TransactionRecords.decode(r.key(), r.value());
            assertThat(d.transactionalId()).isEqualTo("id-ü");
            assertThat(d.value()).isEqualTo(v);
        }
        TransactionValue empty =
                new TransactionValue(5, (short) 0, TransactionState.EMPTY, 1, 0, -1, 9, new TreeSet<>());
        CoordinatorRecord r = TransactionRecords.record("x", empty);
        assertThat(r.value()).hasSize(TransactionRecords.VALUE_FIXED_BYTES);
        assertThat(TransactionRecords.decode(r.key(), r.value()).value()).isEqualTo(empty);
    }

    @Test
    void aTombstoneDecodesToANullValue() {
        CoordinatorRecord r = TransactionRecords.tombstone("tx");
        assertThat(r.isTombstone()).isTrue();
        assertThat(TransactionRecords.decode(r.key(), null)).isEqualTo(new Decoded("tx", null));
    }

    @Test
    void malformedRecordsAreRefusedWithTheReason() {
        CoordinatorRecord r = TransactionRecords.record("tx", example());
        byte[] key = r.key();
        byte[] value = r.value();
        assertRefused(Arrays.copyOf(key, key.length - 1), value, "bad transactionalId length 2");
        assertRefused(new byte[] {0}, value, "truncated");
        assertRefused(Arrays.copyOf(key, key.length + 1), value, "trailing");
        assertRefused(HEX.parseHex("0001" + "00027478"), value, "record type 1");
        assertRefused(HEX.parseHex("0000" + "0000"), value, "empty transactionalId");
        assertRefused(HEX.parseHex("0000" + "0002c328"), value, "invalid UTF-8");
        assertRefused(key, Arrays.copyOf(value, value.length - 2), "truncated");
        assertRefused(key, Arrays.copyOf(value, value.length + 1), "trailing");
        byte[] version = value.clone();
        version[1] = 1;
        assertRefused(key, version, "value version 1");
        byte[] state = value.clone();
        state[12] = 9;
        assertRefused(key, state, "unknown transaction state 9");
        byte[] pid = value.clone();
        pid[2] = (byte) 0x80;
        assertRefused(key, pid, "out of range");
        byte[] count = value.clone();
        count[VALUE_COUNT_AT] = (byte) 0x7f;
        assertRefused(key, count, "bad count");
        byte[] repeated = value.clone();
        repeated[repeated.length - 1] = 0; // t-0 twice
        assertRefused(key, repeated, "repeated partition t-0");
        byte[] negative = value.clone();
        negative[negative.length - 4] = (byte) 0xff;
        assertRefused(key, negative, "bad or repeated partition");
    }

    private static final int VALUE_COUNT_AT = TransactionRecords.VALUE_FIXED_BYTES - 4;

    private static void assertRefused(byte[] key, byte[] value, String why) {
        assertThatThrownBy(() -> TransactionRecords.decode(key, value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why);
    }
}
