package io.stellflow.storage;

import static io.stellflow.storage.ProducerStateManager.APPEND;
import static io.stellflow.storage.ProducerStateManager.DUPLICATE;
import static io.stellflow.storage.ProducerStateManager.INVALID_PRODUCER_EPOCH;
import static io.stellflow.storage.ProducerStateManager.OUT_OF_ORDER_SEQUENCE;
import static io.stellflow.storage.ProducerStateManager.TOO_MANY_PRODUCER_IDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ProducerStateManagerTest {
    private static final long DAY_MS = 24L * 60 * 60 * 1000;
    private final ProducerStateManager m = new ProducerStateManager(DAY_MS, 3);

    /** Checks and, when in order, records a batch of {@code count} at {@code base}. */
    private int send(long pid, int epoch, int baseSeq, int count, long baseOffset, long nowMs) {
        int last = ProducerStateManager.lastSequence(baseSeq, count);
        int code = m.check(pid, (short) epoch, baseSeq, last, nowMs);
        if (code == APPEND) {
            m.update(pid, (short) epoch, baseSeq, last, baseOffset, baseOffset + count - 1, nowMs);
        }
        return code;
    }

    @Test
    void aNewProducerStartsAtSequenceZeroAndContinuesWithoutGaps() {
        assertThat(send(7, 0, 1, 1, 0, 0)).isEqualTo(OUT_OF_ORDER_SEQUENCE);
        assertThat(send(7, 0, 0, 3, 0, 0)).isEqualTo(APPEND);
        assertThat(m.nextSequence(7)).isEqualTo(3);
        assertThat(send(7, 0, 4, 1, 3, 0)).as("gap").isEqualTo(OUT_OF_ORDER_SEQUENCE);
        assertThat(send(7, 0, 2, 2, 3, 0)).as("overlap").isEqualTo(OUT_OF_ORDER_SEQUENCE);
        assertThat(send(7, 0, 3, 2, 3, 0)).isEqualTo(APPEND);
        assertThat(m.nextSequence(7)).isEqualTo(5);
    }

    @Test
    void eachOfTheLastFiveBatchesIsADuplicateWithItsOriginalOffsetsButNotTheSixthBack() {
        for (int i = 0; i < 6; i++) {
            assertThat(send(1, 0, i * 2, 2, 100 + i * 10, 0)).isEqualTo(APPEND);
        }
        assertThat(m.check(1, (short) 0, 0, 1, 0)).as("sixth back: forgotten").isEqualTo(OUT_OF_ORDER_SEQUENCE);
        for (int i = 1; i < 6; i++) {
            assertThat(m.check(1, (short) 0, i * 2, i * 2 + 1, 0)).isEqualTo(DUPLICATE);
            assertThat(m.duplicateBaseOffset()).isEqualTo(100 + i * 10);
            assertThat(m.duplicateLastOffset()).isEqualTo(100 + i * 10 + 1);
        }
        // Same base sequence, another record count: not a retry of that batch.
        assertThat(m.check(1, (short) 0, 10, 12, 0)).isEqualTo(OUT_OF_ORDER_SEQUENCE);
    }

    @Test
    void aLowerEpochIsFencedAndAHigherOneStartsAtZeroAgain() {
        send(5, 3, 0, 10, 0, 0);
        assertThat(send(5, 2, 10, 1, 10, 0)).isEqualTo(INVALID_PRODUCER_EPOCH);
        assertThat(send(5, 4, 10, 1, 10, 0)).isEqualTo(OUT_OF_ORDER_SEQUENCE);
        assertThat(send(5, 4, 0, 1, 10, 0)).isEqualTo(APPEND);
        assertThat(m.epoch(5)).isEqualTo((short) 4);
        assertThat(m.nextSequence(5)).isEqualTo(1);
        assertThat(m.check(5, (short) 4, 0, 9, 0))
                .as("old epoch's batch is gone")
                .isEqualTo(OUT_OF_ORDER_SEQUENCE);
    }

    @Test
    void sequencesWrapFromIntMaxToZero() {
        assertThat(ProducerStateManager.lastSequence(Integer.MAX_VALUE - 1, 3)).isEqualTo(0);
        m.update(9, (short) 0, Integer.MAX_VALUE - 1, Integer.MAX_VALUE, 0, 1, 0);
        assertThat(m.check(9, (short) 0, 0, 4, 0)).isEqualTo(APPEND);
    }

    @Test
    void idsExpireByTheClockNotByLogPosition() {
        send(1, 0, 0, 1, 0, 1_000);
        send(2, 0, 0, 1, 1, 5_000);
        assertThat(m.removeExpired(1_000 + DAY_MS - 1)).isZero();
        assertThat(m.removeExpired(1_000 + DAY_MS)).isEqualTo(1);
        assertThat(m.epoch(1)).isEqualTo((short) -1);
        assertThat(m.epoch(2)).isEqualTo((short) 0);
        // An expired producer is new again: it must start at 0.
        assertThat(m.check(1, (short) 0, 1, 1, 1_000 + DAY_MS)).isEqualTo(OUT_OF_ORDER_SEQUENCE);
    }

    @Test
    void aNewIdBeyondTheBoundIsRefusedUntilAnIdExpires() {
        send(1, 0, 0, 1, 0, 0);
        send(2, 0, 0, 1, 1, 10);
        send(3, 0, 0, 1, 2, 20);
        assertThat(send(4, 0, 0, 1, 3, 30)).isEqualTo(TOO_MANY_PRODUCER_IDS);
        assertThat(m.size()).isEqualTo(3);
        assertThat(send(1, 0, 1, 1, 3, 30)).as("known ids go on").isEqualTo(APPEND);
        // Producer 2 (last append at 10) expires first; 1 appended again at 30.
        assertThat(send(4, 0, 0, 1, 4, 10 + DAY_MS)).isEqualTo(APPEND);
        assertThat(m.epoch(2)).isEqualTo((short) -1);
        assertThat(m.epoch(4)).isEqualTo((short) 0);
    }

    @Test
    void beginAndEndMarkersTrackTheOpenTransactionsAndTheFirstUnstableOffset() {
        m.beginTransaction(1, (short) 0, 10, 5, 0); // a producer first seen by its BEGIN
        assertThat(send(1, 0, 1, 1, 11, 0)).as("its first batch starts at 0").isEqualTo(OUT_OF_ORDER_SEQUENCE);
        assertThat(send(1, 0, 0, 2, 11, 0)).isEqualTo(APPEND);
        m.beginTransaction(2, (short) 0, 13, 1, 0);
        m.beginTransaction(1, (short) 0, 20, 6, 0); // already open: kept as it was
        assertThat(m.openTransactionFirstOffset(1)).isEqualTo(10);
        assertThat(m.openTransactionSequence(1)).isEqualTo(5);
        assertThat(m.firstUnstableOffset()).isEqualTo(10);
        assertThat(m.endTransaction(1, (short) 0, 4, 0)).isEqualTo(10);
        assertThat(m.firstUnstableOffset()).isEqualTo(13);
        assertThat(m.endTransaction(1, (short) 0, 2, 0)).as("a repeated marker").isEqualTo(-1);
        assertThat(m.endTransaction(9, (short) 0, 0, 0))
                .as("an unknown producer")
                .isEqualTo(-1);
        assertThat(m.size()).isEqualTo(2);
        // A marker of a higher epoch moves the producer to it: its next sequence is 0.
        assertThat(m.endTransaction(2, (short) 3, 0, 0)).isEqualTo(13);
        assertThat(m.coordinatorEpoch(1)).as("the highest seen").isEqualTo(4);
        assertThat(m.coordinatorEpoch(9)).isEqualTo(-1);
        assertThat(m.epoch(2)).isEqualTo((short) 3);
        assertThat(m.nextSequence(2)).isZero();
        assertThat(m.firstUnstableOffset()).isEqualTo(ProducerStateManager.NO_OPEN_TRANSACTION);
        assertThat(m.openTransactions()).isZero();
    }

    @Test
    void aProducerWithAnOpenTransactionNeverExpires() {
        m.beginTransaction(1, (short) 0, 0, 0, 0);
        send(2, 0, 0, 1, 1, 0);
        assertThat(m.removeExpired(2 * DAY_MS)).isEqualTo(1);
        assertThat(m.openTransactionFirstOffset(1)).isZero();
        m.endTransaction(1, (short) 0, 0, 2 * DAY_MS);
        assertThat(m.removeExpired(4 * DAY_MS)).isEqualTo(1);
        assertThat(m.size()).isZero();
    }

    @Test
    void badSettingsAreRefused() {
        assertThatThrownBy(() -> new ProducerStateManager(0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("producer.id.expiration.ms 0");
        assertThatThrownBy(() -> new ProducerStateConfig(1, 0))
                .hasMessageContaining("producer.id.max.per.partition must be > 0");
    }

    @Test
    void activeProducersReportSequencesMarkersAndOpenTransactionsAscendingById() {
        m.update(9, (short) 2, 0, 4, 100, 104, 5_000);
        m.beginTransaction(7, (short) 1, 200, 3, 6_000);
        m.update(7, (short) 1, 0, 1, 201, 202, 6_001);
        m.beginTransaction(8, (short) 0, 300, 1, 7_000);
        m.endTransaction(8, (short) 0, 4, 7_500);

        assertThat(m.activeProducers())
                .containsExactly(
                        new ActiveProducer(7, (short) 1, 1, 6_001, -1, 200, 3),
                        new ActiveProducer(8, (short) 0, -1, 7_500, 4, -1, -1),
                        new ActiveProducer(9, (short) 2, 4, 5_000, -1, -1, -1));
    }
}
