package io.stellflow.perf.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class TxnStampTest {
    @Test
    void theWorkedExampleOfTheLayout() {
        byte[] v = new byte[20];
        v[16] = 'x';
        TxnStamp.write(v, 0x0102030405060708L, 5);
        assertThat(HexFormat.of().formatHex(v, 0, 16)).isEqualTo("01020304050607080000000000000005");
        assertThat(v[16]).isEqualTo((byte) 'x'); // the payload after the stamp is left alone
        assertThat(TxnStamp.sentNs(v)).isEqualTo(0x0102030405060708L);
        assertThat(TxnStamp.sequence(v)).isEqualTo(5);
    }

    @Test
    void negativeInstantsRoundTrip() {
        // System.nanoTime() may be negative: the stamp is a plain signed long.
        byte[] v = new byte[TxnStamp.BYTES];
        TxnStamp.write(v, -123_456_789_012L, Long.MAX_VALUE);
        assertThat(TxnStamp.sentNs(v)).isEqualTo(-123_456_789_012L);
        assertThat(TxnStamp.sequence(v)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aValueTooShortForTheStampIsRefusedWithItsLength() {
        assertThatThrownBy(() -> TxnStamp.write(new byte[15], 1, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("16 bytes, got 15 bytes");
        assertThatThrownBy(() -> TxnStamp.sentNs(null)).hasMessageContaining("got null");
    }
}
