package io.stellflow.broker.append;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.UnifiedLog;
import org.junit.jupiter.api.Test;

class IdempotentBatchesTest {
    private static void batch(ByteBuf out, long producerId) {
        int start = out.writerIndex();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 1000);
        b.append(1000, null, new byte[] {1});
        b.close();
        if (producerId >= 0) {
            out.setLong(start + RecordBatchLayout.PRODUCER_ID_OFFSET, producerId);
            out.setShort(start + RecordBatchLayout.PRODUCER_EPOCH_OFFSET, 0);
            out.setInt(start + RecordBatchLayout.BASE_SEQUENCE_OFFSET, 0);
        }
    }

    @Test
    void plainSetsStayPlainAndAnIdempotentProduceCarriesExactlyOneBatch() {
        ByteBuf plain = Unpooled.buffer();
        batch(plain, -1);
        batch(plain, -1);
        ByteBuf one = Unpooled.buffer();
        batch(one, 7);
        ByteBuf two = Unpooled.buffer();
        batch(two, 7);
        batch(two, 7);
        ByteBuf mixed = Unpooled.buffer();
        batch(mixed, -1);
        batch(mixed, 7);
        try {
            assertThat(IdempotentBatches.classify(plain)).isEqualTo(IdempotentBatches.PLAIN);
            assertThat(IdempotentBatches.classify(one)).isEqualTo(IdempotentBatches.IDEMPOTENT);
            assertThat(IdempotentBatches.classify(two)).isEqualTo(IdempotentBatches.INVALID);
            assertThat(IdempotentBatches.classify(mixed)).isEqualTo(IdempotentBatches.INVALID);
        } finally {
            plain.release();
            one.release();
            two.release();
            mixed.release();
        }
    }

    @Test
    void eachLogOutcomeHasItsErrorCodeAndNoneIsDuplicateSequence() {
        assertThat(IdempotentBatches.error(Partition.NOT_LEADER, null, 0)).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(IdempotentBatches.error(UnifiedLog.OUT_OF_ORDER_SEQUENCE, null, 0))
                .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
        assertThat(IdempotentBatches.error(UnifiedLog.INVALID_PRODUCER_EPOCH, null, 0))
                .isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        assertThat(IdempotentBatches.error(UnifiedLog.TOO_MANY_PRODUCER_IDS, null, 0))
                .isEqualTo(Errors.BROKER_NOT_AVAILABLE);
        // The broker-wide bound: retriable in both SDKs and valid in Produce v0 (never 23 or 22).
        assertThat(IdempotentBatches.error(UnifiedLog.TOO_MANY_PRODUCER_IDS_ON_BROKER, null, 60_000))
                .isEqualTo(Errors.BROKER_NOT_AVAILABLE);
    }
}
