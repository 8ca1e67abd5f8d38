package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.DescribeTransactionsResponse.DescribedTransaction;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How {@link AdminTransactions#describeTransactions} merges the answers of every broker: each id's
 * coordinator answer wins whatever the order the brokers answered in, a loading coordinator's code
 * beats NOT_COORDINATOR, and answers for ids not asked for are dropped.
 */
class AdminTransactionsTest {
    private static final DescribedTransaction LIVE = new DescribedTransaction(
            Errors.NONE,
            "tx",
            "Ongoing",
            60_000,
            1_000,
            1_000,
            (short) 0,
            1,
            List.of(new DescribeTransactionsResponse.TopicPartition("t", 0)));

    private static Map<String, DescribedTransaction> asked(String... ids) {
        Map<String, DescribedTransaction> found = new LinkedHashMap<>();
        for (String id : ids) {
            found.put(id, DescribedTransaction.of(Errors.NOT_COORDINATOR, id, ""));
        }
        return found;
    }

    @Test
    void theCoordinatorsAnswerWinsInEitherOrder() {
        DescribedTransaction elsewhere = DescribedTransaction.of(Errors.NOT_COORDINATOR, "tx", "");
        Map<String, DescribedTransaction> first = asked("tx");
        AdminTransactions.merge(first, List.of(LIVE));
        AdminTransactions.merge(first, List.of(elsewhere));
        Map<String, DescribedTransaction> last = asked("tx");
        AdminTransactions.merge(last, List.of(elsewhere));
        AdminTransactions.merge(last, List.of(LIVE));
        assertThat(first).containsExactly(Map.entry("tx", LIVE));
        assertThat(last).containsExactly(Map.entry("tx", LIVE));
    }

    @Test
    void aLoadingCoordinatorIsReportedAndUnaskedIdsAreDropped() {
        Map<String, DescribedTransaction> found = asked("a", "b");
        DescribedTransaction loading = DescribedTransaction.of(Errors.COORDINATOR_NOT_AVAILABLE, "a", "");
        DescribedTransaction dead = DescribedTransaction.of(Errors.NONE, "b", DescribeTransactionsResponse.DEAD);
        AdminTransactions.merge(found, List.of(loading, dead, LIVE));
        AdminTransactions.merge(found, List.of(DescribedTransaction.of(Errors.NOT_COORDINATOR, "a", "")));
        assertThat(found).containsExactly(Map.entry("a", loading), Map.entry("b", dead));
    }
}
