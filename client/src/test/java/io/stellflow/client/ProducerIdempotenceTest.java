package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The sequence bookkeeping of {@link ProducerIdempotence}, one outcome at a time. */
class ProducerIdempotenceTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);
    private final List<ProducerBatch> batches = new ArrayList<>();
    private long nextLocalSequence;

    @AfterEach
    void release() {
        batches.forEach(ProducerBatch::release);
    }

    /** A sealed batch of {@code records} records. */
    private ProducerBatch batch(int records) {
        ProducerBatch b =
                new ProducerBatch(TP, UnpooledByteBufAllocator.DEFAULT, 1 << 16, 1.0, 40, 1000, 0, nextLocalSequence++);
        for (int i = 0; i < records; i++) {
            b.tryAppend(1000, null, new byte[] {(byte) i}, null);
        }
        b.closeSummingRecords(); // as an idempotent producer seals it: the stamp combines the CRC
        batches.add(b);
        return b;
    }

    private static ProducerIdempotence initialized(ProducerIdempotence.Partition p) {
        ProducerIdempotence idem = new ProducerIdempotence();
        assertThat(idem.ready()).isFalse();
        assertThat(idem.startInit(0, 0)).isTrue();
        idem.initialized(1000, (short) 0, List.of(p));
        return idem;
    }

    @Test
    void batchesGetConsecutiveSequencesAndKeepThemWhenStampedAgain() {
        ProducerIdempotence.Partition p = new ProducerIdempotence.Partition();
        ProducerIdempotence idem = initialized(p);
        ProducerBatch a = batch(3);
        ProducerBatch b = batch(2);
        idem.stamp(a, p);
        idem.stamp(b, p);
        idem.stamp(a, p); // a retry: unchanged
        assertThat(a.baseSequence).isZero();
        assertThat(b.baseSequence).isEqualTo(3);
        assertThat(p.nextSequence).isEqualTo(5);
        assertThat(RecordBatchLayout.producerId(b.bytes(), 0)).isEqualTo(1000);
        assertThat(RecordBatchLayout.baseSequence(b.bytes(), 0)).isEqualTo(3);
        assertThat(RecordBatchValidator.validate(b.bytes(), Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
        assertThat(idem.onResult(a, p, Errors.NONE, true)).isEqualTo(ProducerIdempotence.Outcome.COMPLETE);
        assertThat(p.outstanding).containsExactly(b);
    }

    /**
     * A part of a batch that may be in the log whole: the leader's OUT_OF_ORDER_SEQUENCE_NUMBER for
     * the part does not clear the doubt (the whole would be the duplicate, not the part), so after
     * the reset the part fails rather than being stamped anew; a batch of its own is cleared as before.
     */
    @Test
    void aPartOfABatchInDoubtStaysInDoubtAfterOutOfOrder() {
        ProducerIdempotence.Partition p = new ProducerIdempotence.Partition();
        ProducerIdempotence idem = initialized(p);
        ProducerBatch whole = batch(1);
        ProducerBatch part = batch(1);
        idem.stamp(whole, p);
        idem.stamp(part, p);
        whole.mayBeAppended = true;
        part.mayBeAppended = true;
        part.partOfMaybeAppended = true;
        assertThat(idem.onResult(whole, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(whole.mayBeAppended).as("its own batch: the leader has none").isFalse();
        assertThat(idem.onResult(part, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .as("after the hole, under the current id: not stamped anew")
                .isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(part.mayBeAppended).isTrue();
        idem.initialized(1001, (short) 0, List.of(p));
        assertThat(idem.mustFailAfterReset(part)).isTrue();
    }

    /**
     * The stamp combines the records' CRC taken at sealing with the header's: the batch is valid and
     * byte for byte what summing it whole gives, also when stamped again with another epoch and
     * sequence (after an epoch bump).
     */
    @Test
    void aStampFromTheSealedRecordsCrcIsValidAndStaysValidWhenStampedAgain() {
        ProducerBatch b = batch(20);
        b.stampProducer(1000, (short) 0, 0);
        assertThat(RecordBatchValidator.validate(b.bytes(), Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
        b.stampProducer(1000, (short) 1, 7);
        assertThat(RecordBatchLayout.producerEpoch(b.bytes(), 0)).isEqualTo((short) 1);
        assertThat(RecordBatchLayout.baseSequence(b.bytes(), 0)).isEqualTo(7);
        assertThat(RecordBatchLayout.crc(b.bytes(), 0)).isEqualTo(RecordBatchLayout.computeCrc(b.bytes(), 0));
        assertThat(RecordBatchValidator.validate(b.bytes(), Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
    }

    /**
     * The answer of the first batch is lost while the next four are acknowledged: no fifth new batch
     * goes out until the first is settled, so its retry is still among the 5 batches per producer the
     * broker remembers (the flaky OUT_OF_ORDER_SEQUENCE_NUMBER of a lost-ack run before this rule).
     */
    @Test
    void newBatchesWaitWhileTheOldestUnsettledIsFiveBatchesBack() {
        ProducerIdempotence.Partition p = new ProducerIdempotence.Partition();
        ProducerIdempotence idem = initialized(p);
        List<ProducerBatch> sent = new ArrayList<>();
        for (int i = 0; i < ProducerIdempotence.RETRY_WINDOW_BATCHES; i++) {
            ProducerBatch b = batch(1);
            assertThat(idem.maySend(b, p)).as("batch %d", i).isTrue();
            idem.stamp(b, p);
            sent.add(b);
        }
        for (ProducerBatch b : sent.subList(1, sent.size())) {
            assertThat(idem.onResult(b, p, Errors.NONE, true)).isEqualTo(ProducerIdempotence.Outcome.COMPLETE);
        }
        ProducerBatch next = batch(1);
        assertThat(idem.maySend(next, p))
                .as("5 stamped since the unsettled first")
                .isFalse();
        ProducerBatch first = sent.get(0);
        assertThat(idem.maySend(first, p)).as("the retry itself").isTrue();
        assertThat(idem.onResult(first, p, StellflowException.NETWORK_ERROR, true))
                .isEqualTo(ProducerIdempotence.Outcome.RETRY);
        assertThat(idem.maySend(next, p)).as("still unsettled while retried").isFalse();
        assertThat(idem.onResult(first, p, Errors.NONE, true)).isEqualTo(ProducerIdempotence.Outcome.COMPLETE);
        assertThat(idem.maySend(next, p)).isTrue();
        assertThat(p.outstanding).isEmpty();
    }

    @Test
    void outOfOrderBehindAnOutstandingBatchIsRetriedAndAloneIsFatal() {
        ProducerIdempotence.Partition p = new ProducerIdempotence.Partition();
        ProducerIdempotence idem = initialized(p);
        ProducerBatch a = batch(1);
        ProducerBatch b = batch(1);
        ProducerBatch c = batch(1);
        idem.stamp(a, p);
        idem.stamp(b, p);
        idem.stamp(c, p);
        assertThat(idem.onResult(c, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.RETRY);
        assertThat(idem.onResult(a, p, Errors.NOT_LEADER_OR_FOLLOWER, true))
                .isEqualTo(ProducerIdempotence.Outcome.RETRY);
        assertThat(idem.ready()).isTrue();
        // a is resent and refused out of order with nothing before it: its sequence is lost.
        assertThat(idem.onResult(a, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(idem.ready()).isFalse();
        assertThat(idem.resetNeeded()).isTrue();
        // b and c follow the hole: sent again under the new id, not failed.
        assertThat(idem.onResult(b, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.RESTAMP);
        assertThat(idem.onResult(c, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.RESTAMP);
        assertThat(idem.startInit(0, 1)).as("not while a request is in flight").isFalse();
        assertThat(idem.startInit(0, 0)).isTrue();
        idem.initialized(1001, (short) 0, List.of(p));
        idem.stamp(b, p);
        idem.stamp(c, p);
        assertThat(b.producerId).isEqualTo(1001);
        assertThat(b.baseSequence).isZero();
        assertThat(c.baseSequence).isEqualTo(1);
        assertThat(p.hole).isFalse();
    }

    @Test
    void anInvalidEpochOrAFinalErrorOfASentBatchNeedsANewIdButAnUnsentOneDoesNot() {
        ProducerIdempotence.Partition p = new ProducerIdempotence.Partition();
        ProducerIdempotence idem = initialized(p);
        ProducerBatch unsent = batch(1);
        idem.failed(unsent, p); // expired before it was ever stamped
        assertThat(idem.ready()).isTrue();

        ProducerBatch a = batch(1);
        idem.stamp(a, p);
        assertThat(idem.onResult(a, p, Errors.INVALID_PRODUCER_EPOCH, true))
                .isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(idem.resetNeeded()).isTrue();

        ProducerIdempotence.Partition q = new ProducerIdempotence.Partition();
        ProducerIdempotence other = initialized(q);
        ProducerBatch big = batch(1);
        other.stamp(big, q);
        assertThat(other.onResult(big, q, Errors.MESSAGE_TOO_LARGE, true)).isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(other.resetNeeded()).isTrue();
        ProducerBatch retried = batch(1);
        ProducerIdempotence.Partition r = new ProducerIdempotence.Partition();
        ProducerIdempotence third = initialized(r);
        third.stamp(retried, r);
        assertThat(third.onResult(retried, r, StellflowException.NETWORK_ERROR, false))
                .as("retries used up")
                .isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(third.resetNeeded()).isTrue();
    }

    @Test
    void initProducerIdWaitsItsBackOffAfterAFailure() {
        ProducerIdempotence idem = new ProducerIdempotence();
        long now = TimeUnit.SECONDS.toNanos(10);
        assertThat(idem.startInit(now, 0)).isTrue();
        assertThat(idem.startInit(now, 0)).as("one in flight at a time").isFalse();
        idem.initFailed(now, TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(idem.initAttempts()).isEqualTo(1);
        assertThat(idem.startInit(now + TimeUnit.MILLISECONDS.toNanos(99), 0)).isFalse();
        assertThat(idem.startInit(now + TimeUnit.MILLISECONDS.toNanos(100), 0)).isTrue();
        assertThat(ProducerIdempotence.initRetriable(Errors.COORDINATOR_NOT_AVAILABLE))
                .isTrue();
        assertThat(ProducerIdempotence.initRetriable(Errors.UNSUPPORTED_VERSION))
                .isFalse();
    }

    /**
     * An attempt without a verdict marks the batch as possibly stored: it is never stamped anew
     * under the next id (it fails at the reset), unless the leader's OUT_OF_ORDER_SEQUENCE_NUMBER
     * settled it as not stored; an epoch refusal does not settle it.
     */
    @Test
    void aBatchWithoutAVerdictIsNeverStampedUnderTheNextId() {
        ProducerIdempotence.Partition p = new ProducerIdempotence.Partition();
        ProducerIdempotence idem = initialized(p);
        ProducerBatch hole = batch(1);
        ProducerBatch unknown = batch(1);
        ProducerBatch settled = batch(1);
        ProducerBatch fenced = batch(1);
        idem.stamp(hole, p);
        idem.stamp(unknown, p);
        idem.stamp(settled, p);
        idem.stamp(fenced, p);
        assertThat(idem.onResult(unknown, p, StellflowException.NETWORK_ERROR, true))
                .isEqualTo(ProducerIdempotence.Outcome.RETRY);
        assertThat(idem.onResult(settled, p, Errors.REQUEST_TIMED_OUT, true))
                .isEqualTo(ProducerIdempotence.Outcome.RETRY);
        assertThat(idem.onResult(fenced, p, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, true))
                .isEqualTo(ProducerIdempotence.Outcome.RETRY);
        assertThat(idem.onResult(hole, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(idem.resetNeeded()).isTrue();
        // Resent before the reset: out of order behind the hole settles it; an epoch refusal does not.
        assertThat(idem.onResult(settled, p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.RESTAMP);
        assertThat(idem.onResult(fenced, p, Errors.INVALID_PRODUCER_EPOCH, true))
                .isEqualTo(ProducerIdempotence.Outcome.FAIL);
        assertThat(idem.startInit(0, 0)).isTrue();
        idem.initialized(1001, (short) 0, List.of(p));
        assertThat(idem.mustFailAfterReset(unknown)).isTrue();
        assertThat(idem.mustFailAfterReset(settled)).isFalse();
        idem.stamp(settled, p);
        assertThat(settled.producerId).isEqualTo(1001);
        assertThat(settled.baseSequence).isZero();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> idem.stamp(unknown, p))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("may be in the log under producer id 1000");
    }
}
