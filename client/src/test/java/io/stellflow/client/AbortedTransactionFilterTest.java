package io.stellflow.client;

import static io.stellflow.protocol.record.RecordBatchReader.BatchGate.DELIVER;
import static io.stellflow.protocol.record.RecordBatchReader.BatchGate.SKIP;
import static io.stellflow.protocol.record.RecordBatchReader.BatchGate.STOP;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.message.FetchResponse.AbortedTransaction;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The read_committed rule on offsets alone. Each test writes out a partition's log (markers
 * included, as the broker stores it), then walks what a Fetch answer holds: the data batches
 * without the markers, and the aborted list the broker sends (transactions whose [BEGIN, ABORT]
 * overlaps [fetchOffset, last returned offset]).
 */
class AbortedTransactionFilterTest {
    private static final long P = 5;
    private static final long Q = 6;
    private static final long PLAIN = -1;

    private final AbortedTransactionFilter filter = new AbortedTransactionFilter();

    private static AbortedTransaction aborted(long pid, long first) {
        return new AbortedTransaction(pid, first);
    }

    @Test
    void interleavedProducersLoseOnlyTheAbortedOnesBatches() {
        // 0 BEGIN Q | 1 Q | 2 BEGIN P | 3 P | 4 Q | 5 P | 6 Q | 7 ABORT P | 8 COMMIT Q | 9 plain
        filter.reset(0, List.of(aborted(P, 2)));
        assertThat(filter.active()).isTrue();
        assertThat(filter.admit(Q, 1, 1)).isEqualTo(DELIVER);
        assertThat(filter.admit(P, 3, 3)).as("right after its BEGIN").isEqualTo(SKIP);
        assertThat(filter.admit(Q, 4, 4)).isEqualTo(DELIVER);
        assertThat(filter.admit(P, 5, 5))
                .as("no hole since P's last aborted batch")
                .isEqualTo(SKIP);
        assertThat(filter.admit(Q, 6, 6)).isEqualTo(DELIVER);
        assertThat(filter.admit(PLAIN, 9, 9)).isEqualTo(DELIVER);
    }

    @Test
    void anotherProducersMarkerAfterAnAbortedBatchCostsOneMoreFetch() {
        // 0 plain | 1 BEGIN P | 2 P | 3 BEGIN Q | 4 Q | 5 P | 6 Q | 7 ABORT P | 8 COMMIT Q | 9 plain
        filter.reset(0, List.of(aborted(P, 1)));
        assertThat(filter.admit(PLAIN, 0, 0)).isEqualTo(DELIVER);
        assertThat(filter.admit(P, 2, 2)).isEqualTo(SKIP);
        assertThat(filter.admit(Q, 4, 4)).isEqualTo(DELIVER);
        assertThat(filter.admit(P, 5, 5))
                .as("offset 3 is missing: it might be P's abort")
                .isEqualTo(STOP);
        // Fetched again at 5: P's abort is still listed, so its marker is at 5 or later.
        filter.reset(5, List.of(aborted(P, 1)));
        assertThat(filter.admit(P, 5, 5)).isEqualTo(SKIP);
        assertThat(filter.admit(Q, 6, 6)).isEqualTo(DELIVER);
        assertThat(filter.admit(PLAIN, 9, 9)).isEqualTo(DELIVER);
    }

    @Test
    void severalAbortedTransactionsOfOneProducerAroundACommittedOne() {
        // 0 BEGIN P | 1 P | 2 P | 3 ABORT P | 4 BEGIN P | 5 P | 6 COMMIT P | 7 BEGIN P | 8 P | 9 ABORT P
        // | 10 Q (idempotent, not transactional)
        List<AbortedTransaction> listed = List.of(aborted(P, 0), aborted(P, 7));
        filter.reset(0, listed);
        assertThat(filter.admit(P, 1, 1)).isEqualTo(SKIP);
        assertThat(filter.admit(P, 2, 2)).isEqualTo(SKIP);
        // Offsets 3-4 are missing: the first abort may end there, so batch 5 cannot be decided here.
        assertThat(filter.admit(P, 5, 5)).isEqualTo(STOP);

        // The consumer fetches again at 5: the first transaction (ABORT at 3) is no longer listed.
        filter.reset(5, List.of(aborted(P, 7)));
        assertThat(filter.admit(P, 5, 5)).as("the committed transaction").isEqualTo(DELIVER);
        assertThat(filter.admit(P, 8, 8))
                .as("right after the second abort's BEGIN")
                .isEqualTo(SKIP);
        assertThat(filter.admit(Q, 10, 10)).isEqualTo(DELIVER);
    }

    @Test
    void twoProducersAbortingInOneAnswer() {
        // 0 BEGIN P | 1 P | 2 BEGIN Q | 3 Q | 4 P | 5 Q | 6 ABORT Q | 7 ABORT P | 8 plain
        filter.reset(0, List.of(aborted(P, 0), aborted(Q, 2)));
        assertThat(filter.admit(P, 1, 1)).isEqualTo(SKIP);
        assertThat(filter.admit(Q, 3, 3)).isEqualTo(SKIP);
        assertThat(filter.admit(P, 4, 4)).as("offset 2 is missing").isEqualTo(STOP);
        filter.reset(4, List.of(aborted(P, 0), aborted(Q, 2)));
        assertThat(filter.admit(P, 4, 4)).isEqualTo(SKIP);
        assertThat(filter.admit(Q, 5, 5)).isEqualTo(SKIP);
        assertThat(filter.admit(PLAIN, 8, 8)).isEqualTo(DELIVER);
    }

    @Test
    void aTransactionSpanningTwoFetchAnswers() {
        // 0 BEGIN P | 1 P | 2 P | 3 P | 4 ABORT P | 5 plain; the first answer stops after 2 (size).
        filter.reset(0, List.of(aborted(P, 0)));
        assertThat(filter.admit(P, 1, 1)).isEqualTo(SKIP);
        assertThat(filter.admit(P, 2, 2)).isEqualTo(SKIP);
        filter.reset(3, List.of(aborted(P, 0)));
        assertThat(filter.admit(P, 3, 3))
                .as("the abort is listed, so its marker is at 3 or later")
                .isEqualTo(SKIP);
        assertThat(filter.admit(PLAIN, 5, 5)).isEqualTo(DELIVER);
    }

    @Test
    void aSecondAnswerThatStartsAtAnotherProducersMarkerTakesOneMoreFetch() {
        // 0 BEGIN P | 1 P | 2 COMMIT Q | 3 P | 4 ABORT P; the first answer held only 1.
        filter.reset(2, List.of(aborted(P, 0)));
        assertThat(filter.admit(P, 3, 3))
                .as("P's abort might be the missing offset 2")
                .isEqualTo(STOP);
        filter.reset(3, List.of(aborted(P, 0)));
        assertThat(filter.admit(P, 3, 3)).isEqualTo(SKIP);
    }

    @Test
    void aBatchHoldingTheFetchOffsetIsDecidedFromTheFetchOffset() {
        // 0 BEGIN P | 1-4 P (one batch) | 5 ABORT P; fetched at 3, inside the batch.
        filter.reset(3, List.of(aborted(P, 0)));
        assertThat(filter.admit(P, 1, 4)).isEqualTo(SKIP);
    }

    @Test
    void aCompactedHoleIsDecidedByTheNextFetchNotGuessed() {
        // 0 BEGIN P | 1 P | 2 plain (removed by compaction) | 3 P | 4 ABORT P
        filter.reset(0, List.of(aborted(P, 0)));
        assertThat(filter.admit(P, 1, 1)).isEqualTo(SKIP);
        assertThat(filter.admit(P, 3, 3)).isEqualTo(STOP);
        filter.reset(3, List.of(aborted(P, 0)));
        assertThat(filter.admit(P, 3, 3)).isEqualTo(SKIP);
    }

    @Test
    void anAnswerWithoutAbortsDeliversEverythingAndAFilterIsReusedAcrossAnswers() {
        filter.reset(0, List.of(aborted(P, 0), aborted(Q, 0), aborted(7, 0), aborted(8, 0), aborted(9, 0)));
        assertThat(filter.admit(9, 1, 1)).isEqualTo(SKIP);
        filter.reset(10, List.of());
        assertThat(filter.active()).isFalse();
        assertThat(filter.admit(P, 10, 12)).isEqualTo(DELIVER);
        assertThat(filter.admit(9, 20, 20)).isEqualTo(DELIVER);
    }
}
