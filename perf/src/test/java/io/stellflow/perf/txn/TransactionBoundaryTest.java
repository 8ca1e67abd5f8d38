package io.stellflow.perf.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TransactionBoundaryTest {
    private static final long MS = 1_000_000L;

    @Test
    void aCountLimitEndsTheTransactionAtItsLastRecord() {
        TransactionBoundary b = new TransactionBoundary(0, 3);
        b.begin(0);
        assertThat(b.afterSend(10 * 1000 * MS)).isFalse();
        assertThat(b.afterSend(20 * 1000 * MS)).isFalse();
        assertThat(b.afterSend(30 * 1000 * MS)).isTrue();
        assertThat(b.records()).isEqualTo(3);
        b.begin(40 * 1000 * MS);
        assertThat(b.records()).isZero();
        assertThat(b.afterSend(41 * 1000 * MS)).isFalse();
    }

    @Test
    void aDurationLimitEndsTheTransactionAtTheFirstSendPastIt() {
        TransactionBoundary b = new TransactionBoundary(100, 0);
        b.begin(1_000 * MS);
        assertThat(b.afterSend(1_050 * MS)).isFalse();
        assertThat(b.afterSend(1_099 * MS)).isFalse();
        assertThat(b.afterSend(1_100 * MS)).isTrue();
        assertThat(b.records()).isEqualTo(3);
    }

    @Test
    void withBothLimitsWhicheverComesFirstEndsIt() {
        TransactionBoundary b = new TransactionBoundary(100, 2);
        b.begin(0);
        assertThat(b.afterSend(MS)).isFalse();
        assertThat(b.afterSend(2 * MS)).isTrue(); // the count
        b.begin(3 * MS);
        assertThat(b.afterSend(103 * MS)).isTrue(); // the time, one record in
        assertThat(b.records()).isEqualTo(1);
    }

    @Test
    void aTransactionWithoutAnyLimitOrANegativeOneIsRefused() {
        assertThatThrownBy(() -> new TransactionBoundary(0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--transaction-duration-ms");
        assertThatThrownBy(() -> new TransactionBoundary(-1, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TransactionBoundary(10, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
