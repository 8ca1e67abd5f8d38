package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The split of a batch the broker refused as too large ({@link ProducerBatch#halves}, {@link
 * ProducerIdempotence#split}, {@link ProducerPartitionQueue#requeue}): the halves keep each record's
 * callback, timestamp and bytes, take the original's place and sequences, and every buffer is given
 * back exactly once.
 */
class ProducerBatchSplitTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);

    /** Buffers straight from the pooled allocator (leak-tracked), each given back at most once. */
    private static final class CountingPool extends ProducerBufferPool {
        final Map<ByteBuf, Integer> gives = new IdentityHashMap<>();
        int takes;

        @Override
        ByteBuf take(int minCapacityBytes) {
            takes++;
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(minCapacityBytes);
            gives.put(b, 0);
            return b;
        }

        @Override
        void give(ByteBuf buffer) {
            assertThat(gives.merge(buffer, 1, Integer::sum))
                    .as("given back once")
                    .isEqualTo(1);
            buffer.release();
        }

        @Override
        boolean recycles() {
            return false;
        }

        @Override
        void close() {}

        @Override
        long allocatedBuffers() {
            return takes;
        }

        @Override
        long outstandingBuffers() {
            int given = 0;
            for (int n : gives.values()) {
                given += n;
            }
            return takes - given;
        }

        void assertAllGivenBackOnce() {
            assertThat(gives.values()).allMatch(n -> n == 1);
        }
    }

    private final CountingPool pool = new CountingPool();
    private final List<ProducerBatch> batches = new ArrayList<>();
    private long nextLocalSequence;

    @AfterEach
    void releaseAll() {
        batches.forEach(ProducerBatch::release);
        pool.assertAllGivenBackOnce();
    }

    /** What each record's callback got, by record index. */
    private final Map<Integer, RecordMetadata> completed = new java.util.HashMap<>();

    /** An open batch of {@code records} records "r{i}" at timestamp 5000 + i, each with a callback. */
    private ProducerBatch batch(int records) {
        ProducerBatch b = new ProducerBatch(TP, pool, 1 << 16, 1.0, 40, 5000, 77, nextLocalSequence++);
        for (int i = 0; i < records; i++) {
            int index = i;
            assertThat(b.tryAppend(5000 + i, null, ("r" + i).getBytes(StandardCharsets.UTF_8), (m, e) -> {
                        assertThat(e).isNull();
                        completed.put(index, m);
                    }))
                    .isTrue();
        }
        batches.add(b);
        return b;
    }

    private ProducerBatch[] halves(ProducerBatch b) {
        ProducerBatch[] h = b.halves(pool);
        batches.add(h[0]);
        batches.add(h[1]);
        return h;
    }

    private static List<DecodedRecord> records(ProducerBatch b) {
        return RecordBatchReader.decode(b.bytes(), 0);
    }

    @Test
    void theHalvesKeepEachRecordsCallbackTimestampAndBytesInOrder() {
        ProducerBatch whole = batch(5);
        whole.close();
        int takesBefore = pool.takes;
        ProducerBatch[] h = halves(whole);
        assertThat(pool.takes - takesBefore).as("one buffer per half").isEqualTo(2);
        assertThat(h[0].recordCount()).isEqualTo(2);
        assertThat(h[1].recordCount()).isEqualTo(3);
        for (ProducerBatch half : h) {
            assertThat(half.sequence).isEqualTo(whole.sequence);
            assertThat(half.createdNs).isEqualTo(whole.createdNs);
            assertThat(half.isCompressed()).isFalse();
            half.close();
            assertThat(RecordBatchValidator.validate(half.bytes(), Integer.MAX_VALUE))
                    .isEqualTo(Errors.NONE);
            assertThat(half.reservedBytes).as("exactly its bytes").isEqualTo(half.sizeInBytes());
        }
        assertThat(h[0].splitIndex).isZero();
        assertThat(h[1].splitIndex).isEqualTo(2);
        assertThat(records(h[0]))
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("r0", "r1");
        assertThat(records(h[1]))
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8), DecodedRecord::timestampMs)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("r2", 5002L),
                        org.assertj.core.groups.Tuple.tuple("r3", 5003L),
                        org.assertj.core.groups.Tuple.tuple("r4", 5004L));
        // The original's buffer goes back once, its callbacks never run; the halves complete them.
        whole.release();
        whole.release();
        h[1].complete(102);
        h[0].complete(100);
        assertThat(completed).hasSize(5);
        for (int i = 0; i < 5; i++) {
            assertThat(completed.get(i).offset()).isEqualTo(100 + i);
            assertThat(completed.get(i).timestampMs()).isEqualTo(5000 + i);
        }
    }

    @Test
    void aHalfSplitAgainKeepsItsPlaceAndRecordOrder() {
        ProducerBatch whole = batch(7);
        whole.close();
        ProducerBatch[] h = halves(whole); // [0, 3), [3, 7)
        h[1].close();
        ProducerBatch[] hh = halves(h[1]); // [3, 5), [5, 7)
        assertThat(hh[0].splitIndex).isEqualTo(3);
        assertThat(hh[1].splitIndex).isEqualTo(5);
        ProducerBatch later = batch(1);
        ProducerPartitionQueue q = new ProducerPartitionQueue(false);
        q.batches.add(later);
        // Back in any order: sorted by the original's place, then record order.
        q.requeue(hh[1]);
        q.requeue(h[0]);
        q.requeue(hh[0]);
        assertThat(q.batches).containsExactly(h[0], hh[0], hh[1], later);
    }

    @Test
    void aCompressedBatchOfSeveralPartsIsReadBackWhole() {
        ProducerBatch whole = batch(40);
        whole.close(false);
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.LZ4, CompressionConfig.DEFAULT)) {
            whole.compress(codec, pool, 200); // small parts: several compressed batches in one buffer
        }
        assertThat(whole.isCompressed()).isTrue();
        assertThat(whole.batchCount()).isGreaterThan(1);
        ProducerBatch[] h = halves(whole);
        assertThat(h[0].isCompressed()).isFalse();
        h[0].close();
        h[1].close();
        List<String> values = new ArrayList<>();
        records(h[0]).forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
        records(h[1]).forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            expected.add("r" + i);
        }
        assertThat(values).containsExactlyElementsOf(expected);
    }

    /**
     * With idempotence the halves take the original's sequences and its place among the outstanding
     * batches: a later batch answered OUT_OF_ORDER_SEQUENCE_NUMBER is retried after them, and the
     * batch pushed out of the retry window by the extra half waits for the oldest to complete.
     */
    @Test
    void idempotentHalvesTakeTheOriginalsSequencesAndPlace() {
        ProducerIdempotence.Partition p = new ProducerIdempotence.Partition();
        ProducerIdempotence idem = new ProducerIdempotence();
        assertThat(idem.startInit(0, 0)).isTrue();
        idem.initialized(1000, (short) 3, List.of(p));
        List<ProducerBatch> stamped = new ArrayList<>();
        for (int n : new int[] {3, 4, 2, 2, 2}) {
            ProducerBatch b = batch(n);
            b.closeSummingRecords();
            assertThat(idem.maySend(b, p)).isTrue();
            idem.stamp(b, p);
            stamped.add(b);
        }
        ProducerBatch refused = stamped.get(1); // sequences 3..6, in flight with the later ones
        ProducerBatch[] h = halves(refused);
        for (ProducerBatch half : h) {
            half.closeSummingRecords();
        }
        idem.split(refused, h[0], h[1], p);
        assertThat(h[0].baseSequence).isEqualTo(3);
        assertThat(h[1].baseSequence).isEqualTo(5);
        for (ProducerBatch half : h) {
            ByteBuf bytes = half.bytes();
            assertThat(RecordBatchLayout.producerId(bytes, 0)).isEqualTo(1000);
            assertThat(RecordBatchLayout.producerEpoch(bytes, 0)).isEqualTo((short) 3);
            assertThat(RecordBatchLayout.baseSequence(bytes, 0)).isEqualTo(half.baseSequence);
            assertThat(RecordBatchValidator.validate(bytes, Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
        }
        assertThat(p.nextSequence).as("unchanged: same records").isEqualTo(13);
        assertThat(p.outstanding)
                .containsExactly(stamped.get(0), h[0], h[1], stamped.get(2), stamped.get(3), stamped.get(4));
        assertThat(p.outstanding).extracting(b -> b.stampIndex).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        // Stamped: a drain keeps their stamp; the last batch is now 6th in the window: it waits.
        idem.stamp(h[0], p);
        assertThat(h[0].baseSequence).isEqualTo(3);
        assertThat(idem.maySend(h[1], p)).isTrue();
        assertThat(idem.maySend(stamped.get(4), p)).isFalse();
        // A later batch refused out of order while the halves are outstanding: retried after them.
        assertThat(idem.onResult(stamped.get(2), p, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, true))
                .isEqualTo(ProducerIdempotence.Outcome.RETRY);
        assertThat(idem.onResult(stamped.get(0), p, Errors.NONE, true)).isEqualTo(ProducerIdempotence.Outcome.COMPLETE);
        assertThat(idem.maySend(stamped.get(4), p)).isTrue();
        assertThat(idem.resetNeeded()).isFalse();
        refused.release();
    }
}
