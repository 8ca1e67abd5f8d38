package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse.AbortedTransaction;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Fetch answers as record bytes (v0 offsets: fetchOffset + baseOffsetDelta) through the isolation. */
class FetchIsolationTest {
    private final ByteBuf records = Unpooled.buffer();

    @AfterEach
    void release() {
        records.release();
    }

    /** Appends a batch of {@code values} at absolute {@code baseOffset} for a Fetch at {@code fetchOffset}. */
    private void batch(long fetchOffset, long baseOffset, long producerId, String... values) {
        int start = records.writerIndex();
        RecordBatchBuilder b = new RecordBatchBuilder(records, 1_000);
        for (String v : values) {
            b.append(1_000, null, v.getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        if (producerId >= 0) {
            RecordBatchLayout.setProducerFields(records, start, producerId, (short) 0, 0);
        }
        RecordBatchLayout.setBaseOffsetDelta(records, start, (int) (baseOffset - fetchOffset));
    }

    private static CompletedFetch answer(
            long fetchOffset, long hw, long lso, List<AbortedTransaction> aborted, ByteBuf records) {
        FetchResult r = new FetchResult(Errors.NONE, hw, lso, aborted, fetchOffset, records);
        return new CompletedFetch(new TopicPartition("t", 0), 1, fetchOffset, r, null);
    }

    private static List<String> decode(FetchIsolation isolation, CompletedFetch f) {
        List<String> out = new ArrayList<>();
        RecordBatchReader.decode(
                f.result.records(),
                f.result.baseOffset(),
                true,
                null,
                isolation.gate(f),
                (offset, ts, key, value, headers) -> out.add(offset + ":" + new String(value, StandardCharsets.UTF_8)));
        return out;
    }

    @Test
    void readCommittedLeavesOutAbortedBatchesAndStopsWhereItCannotDecide() {
        // Log: 10 plain | 11 BEGIN P | 12-13 P | 14 Q | 15 P | 16 ABORT P | 17 BEGIN P | 18 P | 19 COMMIT P
        long fetch = 10;
        batch(fetch, 10, -1, "plain");
        batch(fetch, 12, 5, "p-aborted", "p-aborted");
        batch(fetch, 14, 6, "q");
        batch(fetch, 15, 5, "p-aborted");
        batch(fetch, 18, 5, "p-committed");
        CompletedFetch f = answer(fetch, 20, 20, List.of(new AbortedTransaction(5, 11)), records);

        FetchIsolation committed = new FetchIsolation(true);
        assertThat(committed.nextOffset(f))
                .as("batch 18 follows a hole: fetched again from 18")
                .isEqualTo(18);
        assertThat(decode(committed, f)).containsExactly("10:plain", "14:q");
        assertThat(committed.visibleEnd(f.result)).isEqualTo(20);

        FetchIsolation uncommitted = new FetchIsolation(false);
        assertThat(uncommitted.gate(f)).isNull();
        assertThat(uncommitted.nextOffset(f)).isEqualTo(19);
        assertThat(decode(uncommitted, f))
                .containsExactly("10:plain", "12:p-aborted", "13:p-aborted", "14:q", "15:p-aborted", "18:p-committed");
    }

    @Test
    void theRefetchAfterAStopDeliversTheCommittedBatch() {
        long fetch = 18;
        batch(fetch, 18, 5, "p-committed");
        CompletedFetch f = answer(fetch, 20, 20, List.of(), records);
        FetchIsolation committed = new FetchIsolation(true);
        assertThat(committed.nextOffset(f)).isEqualTo(19);
        assertThat(decode(committed, f)).containsExactly("18:p-committed");
    }

    @Test
    void anAnswerOfOnlyAbortedBatchesStillMovesTheFetchOffset() {
        batch(3, 3, 5, "a", "b");
        CompletedFetch f = answer(3, 9, 9, List.of(new AbortedTransaction(5, 2)), records);
        FetchIsolation committed = new FetchIsolation(true);
        assertThat(committed.nextOffset(f)).isEqualTo(5);
        assertThat(decode(committed, f)).isEmpty();
    }

    @Test
    void anEmptyAnswerBelowTheBoundMovesToTheBoundAndLagCountsToTheLso() {
        // Only markers in [7, 9): the broker answers no records; LSO 9 at read_committed, HW 12.
        CompletedFetch f = answer(7, 12, 9, List.of(), null);
        assertThat(new FetchIsolation(true).nextOffset(f)).isEqualTo(9);
        assertThat(new FetchIsolation(true).visibleEnd(f.result)).isEqualTo(9);
        assertThat(new FetchIsolation(false).nextOffset(f)).isEqualTo(12);
        assertThat(new FetchIsolation(false).visibleEnd(f.result)).isEqualTo(12);
        CompletedFetch atEnd = answer(9, 9, 9, List.of(), null);
        assertThat(new FetchIsolation(true).nextOffset(atEnd))
                .as("at the bound: nothing moves")
                .isEqualTo(-1);
        CompletedFetch unknownLso = answer(7, 12, -1, List.of(), null);
        assertThat(new FetchIsolation(true).visibleEnd(unknownLso.result)).isEqualTo(12);
    }
}
