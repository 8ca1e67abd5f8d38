package io.stellflow.perf.groups;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StableCoverTest {
    @Test
    void aBalancedDisjointFullCoverIsStable() {
        assertThat(StableCover.check(List.of(Set.of(0, 1, 2, 3), Set.of(4, 5, 6), Set.of(7, 8, 9)), 10))
                .isNull();
    }

    @Test
    void aMissingPartitionIsNotStable() {
        assertThat(StableCover.check(List.of(Set.of(0, 1, 2), Set.of(4, 5, 6), Set.of(7, 8, 9)), 10))
                .contains("owned 9 of 10");
    }

    @Test
    void aPartitionOwnedTwiceIsNotStable() {
        assertThat(StableCover.check(List.of(Set.of(0, 1, 2, 3, 4), Set.of(4, 5, 6, 7, 8, 9)), 10))
                .contains("partition 4 owned by two members");
    }

    @Test
    void aFullCoverHeldByOneMemberIsNotStableWhileOthersOwnNothing() {
        // The state right after the first member of a group joined: a full, disjoint cover that the
        // rebalance has not finished spreading.
        assertThat(StableCover.check(List.of(Set.of(0, 1, 2, 3, 4, 5), Set.of(), Set.of()), 6))
                .contains("3 members outside 2..2");
    }

    @Test
    void aPartitionOutsideTheTopicIsReported() {
        assertThat(StableCover.check(List.of(Set.of(0, 7)), 2)).contains("partition 7 outside 0..1");
    }

    @Test
    void noLiveMemberIsNotStable() {
        assertThat(StableCover.check(List.of(), 3)).isEqualTo("no live member");
    }
}
