package io.stellflow.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link GroupPartitioner}: fixed values (a change of the function would move every group's
 * coordinator, so they are pinned here, from the CRC-32C check value of "123456789", 0xe3069283),
 * always in range (the unsigned CRC folded with floorMod), and groups spread over the partitions.
 */
class GroupPartitionerTest {
    @Test
    void pinnedValuesMatchTheCrc32cOfTheUtf8Bytes() {
        // CRC-32C("123456789") = 0xe3069283 = 3808858755 (the standard check value); mod 50 = 5.
        assertThat(GroupPartitioner.partitionFor("123456789", 50)).isEqualTo(5);
        assertThat(GroupPartitioner.partitionFor("123456789", 1)).isZero();
        // The class comment's worked example.
        assertThat(GroupPartitioner.partitionFor("group-1", 50)).isEqualTo(8);
    }

    @Test
    void alwaysInRangeAndSpreadOverThePartitions() {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 5_000; i++) {
            int p = GroupPartitioner.partitionFor("group-" + i, 50);
            assertThat(p).isBetween(0, 49);
            seen.add(p);
        }
        assertThat(seen).hasSize(50);
        assertThat(GroupPartitioner.partitionFor("", 50)).isBetween(0, 49);
    }

    @Test
    void refusesAPartitionCountBelowOne() {
        assertThatThrownBy(() -> GroupPartitioner.partitionFor("g", 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
