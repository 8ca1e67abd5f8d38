package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.client.TopicPartition;
import io.stellflow.tools.OffsetResetPlanner.PlannedReset;
import io.stellflow.tools.OffsetResetPlanner.Target;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The reset targets computed from log bounds, timestamps and committed offsets, at their edges. */
class OffsetResetPlannerTest {
    private static final TopicPartition P = new TopicPartition("t", 0);

    private static FakeGroupAdmin admin() {
        FakeGroupAdmin a = new FakeGroupAdmin();
        a.topic("t", new FakeGroupAdmin.Log(10, new long[] {100, 200, 200, 300})); // offsets 10-13, end 14
        return a;
    }

    private static PlannedReset plan(long committed, Target target) {
        Map<TopicPartition, Long> c = committed < 0 ? Map.of() : Map.of(P, committed);
        return OffsetResetPlanner.plan(admin(), c, List.of(P), target).get(0);
    }

    @Test
    void earliestAndLatestAreTheLogBounds() {
        assertThat(plan(12, new Target.ToEarliest())).isEqualTo(new PlannedReset(P, 12, 10, ""));
        assertThat(plan(-1, new Target.ToLatest())).isEqualTo(new PlannedReset(P, -1, 14, ""));
    }

    @Test
    void aTimeIsTheFirstRecordAtOrAfterIt() {
        assertThat(plan(12, new Target.ToTime(0)).newOffset()).isEqualTo(10);
        assertThat(plan(12, new Target.ToTime(200)).newOffset())
                .as("the first of equal timestamps")
                .isEqualTo(11);
        assertThat(plan(12, new Target.ToTime(201)).newOffset()).isEqualTo(13);
        assertThat(plan(12, new Target.ToTime(301)))
                .isEqualTo(new PlannedReset(P, 12, 14, "no record at or after the time: log end"));
    }

    @Test
    void offsetsAndShiftsAreClampedIntoTheLog() {
        assertThat(plan(12, new Target.ToOffset(14))).isEqualTo(new PlannedReset(P, 12, 14, ""));
        assertThat(plan(12, new Target.ToOffset(0)))
                .isEqualTo(new PlannedReset(P, 12, 10, "0 is below the log start 10: clamped to 10"));
        assertThat(plan(12, new Target.ToOffset(15)))
                .isEqualTo(new PlannedReset(P, 12, 14, "15 is above the log end 14: clamped to 14"));
        assertThat(plan(12, new Target.ShiftBy(-1))).isEqualTo(new PlannedReset(P, 12, 11, ""));
        assertThat(plan(12, new Target.ShiftBy(2))).isEqualTo(new PlannedReset(P, 12, 14, ""));
        assertThat(plan(12, new Target.ShiftBy(3)))
                .isEqualTo(new PlannedReset(P, 12, 14, "12 + 3 = 15 is above the log end 14: clamped to 14"));
        assertThat(plan(12, new Target.ShiftBy(-5)))
                .as("below the log start, above 0")
                .isEqualTo(new PlannedReset(P, 12, 10, "12 - 5 = 7 is below the log start 10: clamped to 10"));
        assertThat(plan(12, new Target.ShiftBy(-20)))
                .as("below 0: the asked offset is shown as computed, not silently raised to 0")
                .isEqualTo(new PlannedReset(P, 12, 10, "12 - 20 = -8 is below the log start 10: clamped to 10"));
        assertThat(plan(12, new Target.ShiftBy(Long.MIN_VALUE)))
                .as("no overflow")
                .isEqualTo(new PlannedReset(
                        P,
                        12,
                        10,
                        "12 - 9223372036854775808 = -9223372036854775796 is below the log start 10: clamped to 10"));
        assertThat(plan(12, new Target.ShiftBy(Long.MAX_VALUE)).newOffset())
                .as("no overflow")
                .isEqualTo(14);
    }

    @Test
    void aShiftNeedsACommittedOffset() {
        assertThatThrownBy(() -> plan(-1, new Target.ShiftBy(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no committed offset for t-0");
    }
}
