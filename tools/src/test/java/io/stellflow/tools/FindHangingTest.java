package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeProducersResponse;
import io.stellflow.protocol.message.DescribeProducersResponse.Producer;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.DescribeTransactionsResponse.DescribedTransaction;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code find-hanging}'s rule on the answers alone: which open transactions are old enough to
 * check, and which of those a coordinator still knows (an ongoing or completing transaction listing
 * the partition, or a coordinator that could not answer) versus which are hanging.
 */
class FindHangingTest {
    private static final long NOW_MS = 10_000_000;
    private static final long MAX_MS = 15 * 60_000;
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);

    private static Producer open(long pid, long startOffset, long lastMs) {
        return new Producer(pid, (short) 0, 3, lastMs, -1, startOffset, 1);
    }

    private static DescribedTransaction txn(long pid, String state, TopicPartition... partitions) {
        return new DescribedTransaction(
                Errors.NONE,
                "id-" + pid,
                state,
                60_000,
                1,
                pid,
                (short) 0,
                1,
                java.util.Arrays.stream(partitions)
                        .map(tp -> new DescribeTransactionsResponse.TopicPartition(tp.topic(), tp.partition()))
                        .toList());
    }

    @Test
    void onlyOpenTransactionsOlderThanTheTimeoutOfAnsweringPartitionsAreCandidates() {
        Producer old = open(1, 10, NOW_MS - MAX_MS);
        Producer young = open(2, 11, NOW_MS - MAX_MS + 1);
        Producer closed = new Producer(3, (short) 0, 3, 0, 2, -1, -1);
        Map<TopicPartition, DescribeProducersResponse.Partition> answers = new LinkedHashMap<>();
        answers.put(T0, new DescribeProducersResponse.Partition(0, Errors.NONE, List.of(old, young, closed)));
        answers.put(T1, new DescribeProducersResponse.Partition(1, Errors.NOT_LEADER_OR_FOLLOWER, List.of()));

        assertThat(TransactionsCommand.candidates(answers, MAX_MS, NOW_MS))
                .containsExactly(Map.entry(T0, List.of(old)));
        assertThat(TransactionsCommand.candidates(answers, 0, NOW_MS))
                .containsExactly(Map.entry(T0, List.of(old, young)));
    }

    @Test
    void aTransactionIsHangingUnlessACoordinatorListsItsPartitionOrCannotSay() {
        Producer unknown = open(1, 10, 0); // no transactional id has producer 1
        Producer listed = open(2, 20, 0); // ongoing at its coordinator with t-0
        Producer otherPartition = open(3, 30, 0); // ongoing, but with t-1 only
        Producer completed = open(4, 40, 0); // its coordinator has it CompleteCommit
        Producer unanswered = open(5, 50, 0); // its coordinator is loading
        Producer committing = open(6, 60, 0); // PrepareCommit with t-0: markers on their way
        Map<TopicPartition, List<Producer>> candidates =
                Map.of(T0, List.of(unknown, listed, otherPartition, completed, unanswered, committing));
        Map<Long, List<DescribedTransaction>> byProducer = Map.of(
                2L, List.of(txn(2, "Ongoing", T1, T0)),
                3L, List.of(txn(3, "Ongoing", T1)),
                4L, List.of(txn(4, "CompleteCommit", T0)),
                5L, List.of(DescribedTransaction.of(Errors.COORDINATOR_NOT_AVAILABLE, "id-5", "")),
                6L, List.of(txn(6, "PrepareCommit", T0)));

        assertThat(TransactionsCommand.hanging(candidates, byProducer, NOW_MS))
                .containsExactly(
                        new TransactionsCommand.Hanging(T0, unknown, NOW_MS),
                        new TransactionsCommand.Hanging(T0, otherPartition, NOW_MS),
                        new TransactionsCommand.Hanging(T0, completed, NOW_MS));
    }

    /** What {@code abort} names in its refusal: the id holding the partition, or the one that could not answer. */
    @Test
    void theCoordinatorTransactionIsTheOneHoldingThePartitionOrTheUnansweredOne() {
        DescribedTransaction elsewhere = txn(2, "Ongoing", T1);
        DescribedTransaction holding = txn(2, "PrepareAbort", T0);
        DescribedTransaction loading = DescribedTransaction.of(Errors.COORDINATOR_NOT_AVAILABLE, "id-x", "");

        assertThat(TransactionsCommand.coordinatorTransaction(List.of(elsewhere, holding), T0))
                .isSameAs(holding);
        assertThat(TransactionsCommand.coordinatorTransaction(List.of(elsewhere, loading), T0))
                .isSameAs(loading);
        assertThat(TransactionsCommand.coordinatorTransaction(List.of(elsewhere, txn(2, "CompleteAbort", T0)), T0))
                .isNull();
        assertThat(TransactionsCommand.coordinatorTransaction(List.of(), T0)).isNull();
    }
}
