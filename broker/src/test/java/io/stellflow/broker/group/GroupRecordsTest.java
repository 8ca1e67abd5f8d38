package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.group.GroupRecords.ClassicGroupValue;
import io.stellflow.broker.group.GroupRecords.ClassicMemberValue;
import io.stellflow.broker.group.GroupRecords.ConsumerGroupValue;
import io.stellflow.broker.group.GroupRecords.JournalEntry;
import io.stellflow.broker.group.GroupRecords.MemberValue;
import io.stellflow.broker.group.GroupRecords.OffsetValue;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GroupRecordsTest {
    private static final Assignment A = Assignment.of(Map.of("t", List.of(2, 0), "u", List.of(5)));

    @Test
    void theJavadocWorkedExampleIsByteExact() {
        CoordinatorRecord r = GroupRecords.offset("g", "t", 0, new OffsetValue(5, -1, "", 1000));
        HexFormat hex = HexFormat.of();
        assertThat(hex.formatHex(r.key())).isEqualTo("0000" + "000167" + "000174" + "00000000");
        assertThat(hex.formatHex(r.value()))
                .isEqualTo("0000" + "0000000000000005" + "ffffffff" + "0000" + "00000000000003e8");
    }

    @Test
    void everyTypeRoundTripsIncludingTombstones() {
        List<CoordinatorRecord> records = List.of(
                GroupRecords.offset("g", "t", 3, new OffsetValue(42, 7, null, 99)),
                GroupRecords.offset("g", "t", 3, null),
                GroupRecords.classicGroup(
                        "g",
                        new ClassicGroupValue(
                                4,
                                "m1",
                                -1,
                                List.of(
                                        new ClassicMemberValue("m1", "c", "h", 30_000),
                                        new ClassicMemberValue("m2", "c", "h", 6_000)))),
                GroupRecords.classicGroup("g", null),
                GroupRecords.consumerGroup("g", new ConsumerGroupValue(9, "range", 1234)),
                GroupRecords.member(
                        "g",
                        "m",
                        new MemberValue(
                                "i",
                                null,
                                "c",
                                "h",
                                "uniform",
                                List.of("t", "u"),
                                300_000,
                                5,
                                4,
                                A,
                                Assignment.of(Map.of("v", List.of(1))))),
                GroupRecords.member("g", "m", null),
                GroupRecords.targetMember("g", "m", A),
                GroupRecords.targetMember("g", "m", Assignment.EMPTY),
                GroupRecords.targetEpoch("g", 9),
                GroupRecords.targetEpoch("g", null),
                GroupRecords.journal(
                        "g", 17, new JournalEntry(273, 5, "ANONYMOUS", "tool", null, "t", 1, -1, 10, "admin-commit")),
                GroupRecords.journal("g", 17, null));
        List<GroupRecords.Decoded> expected = List.of(
                new GroupRecords.OffsetRecord("g", "t", 3, new OffsetValue(42, 7, null, 99)),
                new GroupRecords.OffsetRecord("g", "t", 3, null),
                new GroupRecords.ClassicGroupRecord(
                        "g",
                        new ClassicGroupValue(
                                4,
                                "m1",
                                -1,
                                List.of(
                                        new ClassicMemberValue("m1", "c", "h", 30_000),
                                        new ClassicMemberValue("m2", "c", "h", 6_000)))),
                new GroupRecords.ClassicGroupRecord("g", null),
                new GroupRecords.ConsumerGroupRecord("g", new ConsumerGroupValue(9, "range", 1234)),
                new GroupRecords.MemberRecord(
                        "g",
                        "m",
                        new MemberValue(
                                "i",
                                null,
                                "c",
                                "h",
                                "uniform",
                                List.of("t", "u"),
                                300_000,
                                5,
                                4,
                                A,
                                Assignment.of(Map.of("v", List.of(1))))),
                new GroupRecords.MemberRecord("g", "m", null),
                new GroupRecords.TargetMemberRecord("g", "m", A),
                new GroupRecords.TargetMemberRecord("g", "m", Assignment.EMPTY),
                new GroupRecords.TargetEpochRecord("g", 9),
                new GroupRecords.TargetEpochRecord("g", null),
                new GroupRecords.JournalRecord(
                        "g", 17, new JournalEntry(273, 5, "ANONYMOUS", "tool", null, "t", 1, -1, 10, "admin-commit")),
                new GroupRecords.JournalRecord("g", 17, null));
        for (int i = 0; i < records.size(); i++) {
            CoordinatorRecord r = records.get(i);
            assertThat(GroupRecords.decode(r.key(), r.value()))
                    .as("record %d", i)
                    .isEqualTo(expected.get(i));
        }
    }

    @Test
    void keysOfDifferentStateDifferAndTheSameStateSharesAKey() {
        byte[] k1 = GroupRecords.offset("g", "t", 0, null).key();
        byte[] k2 = GroupRecords.offset("g", "t", 1, null).key();
        byte[] k3 =
                GroupRecords.offset("g", "t", 0, new OffsetValue(1, -1, "", 0)).key();
        assertThat(Arrays.equals(k1, k2)).isFalse();
        assertThat(k1).isEqualTo(k3);
        assertThat(GroupRecords.consumerGroup("g", null).key())
                .isNotEqualTo(GroupRecords.targetEpoch("g", null).key());
    }

    @Test
    void badInputIsAnIllegalArgumentNamingTheProblem() {
        CoordinatorRecord r = GroupRecords.offset("g", "t", 0, new OffsetValue(5, -1, "", 1000));
        byte[] unknownType = r.key().clone();
        unknownType[1] = 99;
        assertThatThrownBy(() -> GroupRecords.decode(unknownType, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown __consumer_offsets record type 99");
        byte[] badVersion = r.value().clone();
        badVersion[1] = 1;
        assertThatThrownBy(() -> GroupRecords.decode(r.key(), badVersion))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown value version 1");
        assertThatThrownBy(() -> GroupRecords.decode(r.key(), Arrays.copyOf(r.value(), r.value().length - 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("truncated");
        assertThatThrownBy(() -> GroupRecords.decode(r.key(), Arrays.copyOf(r.value(), r.value().length + 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("trailing");
        byte[] badUtf8 = r.key().clone();
        badUtf8[4] = (byte) 0xff; // the group's one byte
        assertThatThrownBy(() -> GroupRecords.decode(badUtf8, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("UTF-8");
        byte[] hugeCount = GroupRecords.targetMember("g", "m", A).value().clone();
        hugeCount[2] = 0x7f;
        assertThatThrownBy(() -> GroupRecords.decode(
                        GroupRecords.targetMember("g", "m", null).key(), hugeCount))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad array count");
    }
}
