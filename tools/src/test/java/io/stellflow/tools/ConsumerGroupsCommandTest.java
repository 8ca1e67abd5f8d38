package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.TopicPartitions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-consumer-groups.sh} against {@link FakeGroupAdmin}: the argument checks (exit 2,
 * nothing sent), every view's table, the reset plans computed from offsets and timestamps, dry run
 * against {@code --execute}, the refusals (active group, unknown group or topic, unreachable cluster,
 * refused partitions: exit 1 with the reason on stderr).
 */
class ConsumerGroupsCommandTest {
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);
    private static final TopicPartition T2 = new TopicPartition("t", 2);
    private static final TopicPartition U0 = new TopicPartition("u", 0);

    private final FakeGroupAdmin fake = new FakeGroupAdmin();
    private final AtomicInteger adminsCreated = new AtomicInteger();
    private final AtomicReference<Properties> adminProps = new AtomicReference<>();

    @BeforeEach
    void cluster() {
        // t-0: offsets 0-4 at 1000..5000 ms; t-1: 2-4 (log start 2) at 1000, 1000, 6000 ms; t-2 empty.
        fake.topic(
                "t",
                new FakeGroupAdmin.Log(0, new long[] {1000, 2000, 3000, 4000, 5000}),
                new FakeGroupAdmin.Log(2, new long[] {1000, 1000, 6000}),
                new FakeGroupAdmin.Log(0, new long[0]));
        fake.topic("u", new FakeGroupAdmin.Log(0, new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
        fake.emptyGroup("idle", Map.of(T0, 3L, T1, 4L, U0, 7L));
        fake.group(
                new DescribedGroup(
                        Errors.NONE,
                        "busy",
                        "consumer",
                        "Stable",
                        7,
                        7,
                        "uniform",
                        List.of(
                                new DescribedMember(
                                        "m1",
                                        null,
                                        "c1",
                                        "/10.0.0.1",
                                        7,
                                        List.of("t"),
                                        List.of(new TopicPartitions("t", List.of(1, 0))),
                                        List.of()),
                                new DescribedMember(
                                        "m2", "i2", "c2", "/10.0.0.2", 7, List.of("t"), List.of(), List.of()))),
                Map.of(T0, 1L));
    }

    private ToolRun run(String... args) {
        ConsumerGroupsCommand cmd = new ConsumerGroupsCommand();
        cmd.adminFactory = p -> {
            adminsCreated.incrementAndGet();
            adminProps.set(p);
            return fake;
        };
        cmd.clock = Clock.fixed(Instant.ofEpochMilli(7000), ZoneOffset.UTC);
        cmd.zone = ZoneOffset.UTC;
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", "h:1"));
        all.addAll(Arrays.asList(args));
        return ToolRun.run(Tools.commandLine(cmd), all.toArray(String[]::new));
    }

    /** The rows of a printed table, each split on its column gaps (header first). */
    private static List<List<String>> rows(String out) {
        List<List<String>> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                rows.add(List.of(line.trim().split("\\s+")));
            }
        }
        return rows;
    }

    @Test
    void listPrintsGroupIdsOrWithStateATable() {
        ToolRun r = run("--list");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("busy\nidle\n");
        assertThat(rows(run("--list", "--state").out()))
                .containsExactly(
                        List.of("GROUP", "PROTOCOL", "STATE"),
                        List.of("busy", "consumer", "Stable"),
                        List.of("idle", "consumer", "Empty"));
        assertThat(fake.closed).as("the admin is closed").isTrue();
    }

    @Test
    void describeShowsCommittedOffsetLogEndLagAndOwnerPerPartition() {
        ToolRun r = run("--describe", "--group", "busy");
        assertThat(r.exit()).isZero();
        assertThat(rows(r.out()))
                .containsExactly(
                        List.of(
                                "GROUP",
                                "TOPIC",
                                "PARTITION",
                                "CURRENT-OFFSET",
                                "LOG-END-OFFSET",
                                "LAG",
                                "CONSUMER-ID",
                                "HOST",
                                "CLIENT-ID"),
                        List.of("busy", "t", "0", "1", "5", "4", "m1", "/10.0.0.1", "c1"),
                        List.of("busy", "t", "1", "-", "5", "-", "m1", "/10.0.0.1", "c1"),
                        List.of("busy", "-", "-", "-", "-", "-", "m2", "/10.0.0.2", "c2"));
        assertThat(rows(run("--describe", "--group", "busy", "--offsets").out()))
                .isEqualTo(rows(r.out()));
    }

    @Test
    void describeOfAGroupWithoutMembersSaysSoAndShowsItsOffsets() {
        ToolRun r = run("--describe", "--group", "idle");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).startsWith("Consumer group 'idle' has no active members.\n");
        assertThat(rows(r.out()).subList(2, 5))
                .containsExactly(
                        List.of("idle", "t", "0", "3", "5", "2", "-", "-", "-"),
                        List.of("idle", "t", "1", "4", "5", "1", "-", "-", "-"),
                        List.of("idle", "u", "0", "7", "10", "3", "-", "-", "-"));
    }

    @Test
    void offsetsOfADeletedTopicShowNoLogEnd() {
        fake.committed.get("idle").put(new TopicPartition("gone", 0), 9L);
        fake.committed.get("idle").put(new TopicPartition("u", 5), 2L); // beyond u's one partition
        ToolRun r = run("--describe", "--group", "idle");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(rows(r.out()))
                .contains(
                        List.of("idle", "gone", "0", "9", "-", "-", "-", "-", "-"),
                        List.of("idle", "u", "5", "2", "-", "-", "-", "-", "-"));
        assertThat(fake.missingPartitionLookups)
                .as("no lookup the client would retry for seconds")
                .isZero();
    }

    @Test
    void membersAndStateViews() {
        assertThat(rows(run("--describe", "--group", "busy", "--members").out()))
                .containsExactly(
                        List.of(
                                "GROUP",
                                "CONSUMER-ID",
                                "INSTANCE-ID",
                                "HOST",
                                "CLIENT-ID",
                                "MEMBER-EPOCH",
                                "#PARTITIONS",
                                "ASSIGNMENT",
                                "PENDING-REVOCATION"),
                        List.of("busy", "m1", "-", "/10.0.0.1", "c1", "7", "2", "t:1,0", "-"),
                        List.of("busy", "m2", "i2", "/10.0.0.2", "c2", "7", "0", "-", "-"));
        assertThat(rows(run("--describe", "--group", "busy", "--state").out()))
                .containsExactly(
                        List.of(
                                "GROUP",
                                "PROTOCOL",
                                "STATE",
                                "GROUP-EPOCH",
                                "ASSIGNMENT-EPOCH",
                                "ASSIGNOR",
                                "#MEMBERS"),
                        List.of("busy", "consumer", "Stable", "7", "7", "uniform", "2"));
    }

    @Test
    void anUnknownGroupFailsWithExit1() {
        for (String[] args : new String[][] {
            {"--describe", "--group", "nope"},
            {"--describe", "--group", "nope", "--history"},
            {"--delete", "--group", "nope"},
            {"--delete-offsets", "--group", "nope", "--topic", "t"}
        }) {
            ToolRun r = run(args);
            assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(1);
            assertThat(r.err()).contains("error: consumer group 'nope' does not exist");
        }
    }

    @Test
    void dryRunPrintsThePlanAndChangesNothing() {
        ToolRun r = run("--reset-offsets", "--group", "idle", "--topic", "t", "--to-earliest");
        assertThat(r.exit()).isZero();
        assertThat(rows(r.out()))
                .containsExactly(
                        List.of("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"),
                        List.of("idle", "t", "0", "3", "0"),
                        List.of("idle", "t", "1", "4", "2"),
                        List.of("idle", "t", "2", "-", "0"));
        assertThat(r.err()).contains("Dry run: nothing was changed");
        assertThat(fake.commits).isEmpty();
        assertThat(run("--reset-offsets", "--group", "idle", "--topic", "t", "--to-earliest", "--dry-run")
                        .out())
                .isEqualTo(r.out());
        assertThat(fake.commits).isEmpty();
    }

    @Test
    void executeCommitsThePlanAndTheJournalShowsIt() {
        ToolRun r = run("--reset-offsets", "--group", "idle", "--all-topics", "--to-latest", "--execute");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(fake.commits).containsExactly(Map.of(T0, 5L, T1, 5L, U0, 10L));
        assertThat(fake.committedOffsets("idle")).isEqualTo(Map.of(T0, 5L, T1, 5L, U0, 10L));
        assertThat(r.out()).contains("Reset 3 partition(s) of group 'idle'");

        ToolRun h = run("--describe", "--group", "idle", "--history", "--max-entries", "2");
        assertThat(h.exit()).isZero();
        assertThat(rows(h.out()))
                .containsExactly(
                        List.of(
                                "GROUP",
                                "TIME",
                                "TOPIC",
                                "PARTITION",
                                "OLD-OFFSET",
                                "NEW-OFFSET",
                                "SOURCE",
                                "PRINCIPAL",
                                "CLIENT-ID",
                                "MEMBER-ID"),
                        List.of(
                                "idle",
                                "1970-01-01T00:00:01Z",
                                "t",
                                "1",
                                "4",
                                "5",
                                "reset",
                                "ANONYMOUS",
                                "stellflow-consumer-groups",
                                "-"),
                        List.of(
                                "idle",
                                "1970-01-01T00:00:02Z",
                                "u",
                                "0",
                                "7",
                                "10",
                                "reset",
                                "ANONYMOUS",
                                "stellflow-consumer-groups",
                                "-"));
    }

    @Test
    void toOffsetIsClampedIntoTheLogWithANote() {
        ToolRun below = run("--reset-offsets", "--group", "idle", "--topic", "t:1", "--to-offset", "1");
        assertThat(rows(below.out()).get(1))
                .containsExactly(
                        "idle", "t", "1", "4", "2", "1", "is", "below", "the", "log", "start", "2:", "clamped", "to",
                        "2");
        assertThat(below.out()).contains("\nNOTE: t-1: 1 is below the log start 2: clamped to 2\n");
        ToolRun above = run("--reset-offsets", "--group", "idle", "--topic", "t:0", "--to-offset", "99");
        assertThat(above.out()).contains("NOTE: t-0: 99 is above the log end 5: clamped to 5");
        assertThat(rows(above.out()).get(1).subList(0, 5)).containsExactly("idle", "t", "0", "3", "5");
        ToolRun inside = run("--reset-offsets", "--group", "idle", "--topic", "t:0,1", "--to-offset", "3", "--execute");
        assertThat(inside.exit()).isZero();
        assertThat(fake.commits).containsExactly(Map.of(T0, 3L, T1, 3L));
    }

    @Test
    void shiftByMovesTheCommittedOffsetAndNeedsOne() {
        ToolRun r = run("--reset-offsets", "--group", "idle", "--topic", "t:0,1", "--shift-by", "-2", "--execute");
        assertThat(r.exit()).isZero();
        assertThat(fake.commits).containsExactly(Map.of(T0, 1L, T1, 2L));

        ToolRun past = run("--reset-offsets", "--group", "idle", "--topic", "u", "--shift-by", "100");
        assertThat(rows(past.out()).get(1).subList(0, 5)).containsExactly("idle", "u", "0", "7", "10");

        ToolRun none = run("--reset-offsets", "--group", "idle", "--topic", "t", "--shift-by", "1", "--execute");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).contains("no committed offset for t-2", "nothing was changed");
        assertThat(fake.commits).hasSize(1);
    }

    @Test
    void aShiftBelowZeroIsClampedToTheLogStartWithANoteLine() {
        // t-0 is committed at 3 with log start 0, t-1 at 4 with log start 2: -5 goes below both
        ToolRun r = run("--reset-offsets", "--group", "idle", "--topic", "t:0,1", "--shift-by", "-5", "--execute");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out())
                .contains(
                        "\nNOTE: t-0: 3 - 5 = -2 is below the log start 0: clamped to 0\n",
                        "\nNOTE: t-1: 4 - 5 = -1 is below the log start 2: clamped to 2\n");
        assertThat(rows(r.out()).get(1).subList(0, 5)).containsExactly("idle", "t", "0", "3", "0");
        assertThat(fake.commits).containsExactly(Map.of(T0, 0L, T1, 2L));

        ToolRun inside = run("--reset-offsets", "--group", "idle", "--topic", "t:0", "--shift-by", "1");
        assertThat(inside.out()).as("no clamp, no note").doesNotContain("NOTE");
    }

    @Test
    void toDatetimeFindsTheFirstRecordAtOrAfterAndTheLogEndWithout() {
        for (String when :
                new String[] {"1970-01-01T00:00:02.500", "1970-01-01T00:00:02.500Z", "1970-01-01T01:00:02.500+01:00"}) {
            ToolRun r = run("--reset-offsets", "--group", "idle", "--topic", "t", "--to-datetime", when);
            assertThat(r.exit()).as(when).isZero();
            List<List<String>> rows = rows(r.out());
            assertThat(rows.get(1).subList(0, 5)).as(when).containsExactly("idle", "t", "0", "3", "2");
            assertThat(rows.get(2).subList(0, 5)).as(when).containsExactly("idle", "t", "1", "4", "4");
            assertThat(rows.get(3).subList(0, 5)).as(when).containsExactly("idle", "t", "2", "-", "0");
        }
        ToolRun late = run("--reset-offsets", "--group", "idle", "--topic", "t:0", "--to-datetime", "1970-01-01T00:01");
        assertThat(late.out()).contains("no record at or after the time: log end");
        assertThat(rows(late.out()).get(1).subList(0, 5)).containsExactly("idle", "t", "0", "3", "5");
    }

    @Test
    void byDurationCountsBackFromNow() {
        // now = 7000 ms: PT4.5S is 2500 ms, as the date-time above
        ToolRun r =
                run("--reset-offsets", "--group", "idle", "--topic", "t:0,1", "--by-duration", "PT4.5S", "--execute");
        assertThat(r.exit()).isZero();
        assertThat(fake.commits).containsExactly(Map.of(T0, 2L, T1, 4L));
        run("--reset-offsets", "--group", "idle", "--topic", "t:1", "--by-duration", "P0DT0H0M6S", "--execute");
        assertThat(fake.commits.get(1)).isEqualTo(Map.of(T1, 2L)); // 1000 ms: t-1's first record
    }

    @Test
    void aResetIsRefusedWhileTheGroupHasActiveMembers() {
        for (String mode : new String[] {"--execute", "--dry-run"}) {
            ToolRun r = run("--reset-offsets", "--group", "busy", "--topic", "t", "--to-earliest", mode);
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err())
                    .contains("cannot reset the offsets of group 'busy': it has 2 active member(s) (state Stable)")
                    .contains("stop its consumers first");
            assertThat(r.out()).isEmpty();
        }
        assertThat(fake.commits).isEmpty();
    }

    @Test
    void aResetOfAGroupThatDoesNotExistYetSeedsItsOffsets() {
        ToolRun r = run("--reset-offsets", "--group", "fresh", "--topic", "u", "--to-offset", "4", "--execute");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(fake.committedOffsets("fresh")).isEqualTo(Map.of(U0, 4L));
        ToolRun all = run("--reset-offsets", "--group", "other", "--all-topics", "--to-earliest");
        assertThat(all.exit()).isEqualTo(1);
        assertThat(all.err()).contains("has no committed offsets", "--topic");
    }

    @Test
    void refusedPartitionsAreNamedAndTheExitIs1() {
        fake.commitErrors.put(T1, Errors.OFFSET_OUT_OF_RANGE);
        ToolRun r = run("--reset-offsets", "--group", "idle", "--topic", "t:0,1", "--to-earliest", "--execute");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("reset of t-1 refused: OFFSET_OUT_OF_RANGE", "1 of 2 partition(s)");
        assertThat(fake.committedOffsets("idle")).containsEntry(T0, 0L).containsEntry(T1, 4L);
    }

    @Test
    void topicsWithoutSuchPartitionsFailBeforeAnythingIsSent() {
        ToolRun missing = run("--reset-offsets", "--group", "idle", "--topic", "nosuch", "--to-earliest", "--execute");
        assertThat(missing.exit()).isEqualTo(1);
        assertThat(missing.err()).contains("topic 'nosuch' does not exist (it has no partitions)");
        ToolRun p7 = run("--reset-offsets", "--group", "idle", "--topic", "t:7", "--to-earliest", "--execute");
        assertThat(p7.exit()).isEqualTo(1);
        assertThat(p7.err()).contains("topic 't' has no partition 7 (it has 3: 0-2)");
        assertThat(fake.commits).isEmpty();
    }

    @Test
    void anUnreachableClusterIsNamed() {
        fake.unreachable = new StellflowException(StellflowException.NETWORK_ERROR, "cannot connect to h:1");
        ToolRun r = run("--list");
        assertThat(r.exit()).isEqualTo(1);
        // h does not resolve: the probe after the failure names it, as the other tools do
        assertThat(r.err()).isEqualTo("error: h:1: unknown host h\n");
    }

    @Test
    void deleteRemovesAnEmptyGroupAndRefusesOneWithMembers() {
        ToolRun ok = run("--delete", "--group", "idle");
        assertThat(ok.exit()).isZero();
        assertThat(ok.out()).contains("Deleted consumer group 'idle'");
        assertThat(fake.groups).doesNotContainKey("idle");
        ToolRun busy = run("--delete", "--group", "busy");
        assertThat(busy.exit()).isEqualTo(1);
        assertThat(busy.err()).contains("cannot delete group 'busy': it has active members", "NON_EMPTY_GROUP");
        assertThat(fake.groups).containsKey("busy");
    }

    @Test
    void deleteOffsetsReportsEachPartition() {
        ToolRun ok = run("--delete-offsets", "--group", "idle", "--topic", "u");
        assertThat(ok.exit()).isZero();
        assertThat(rows(ok.out()).get(1)).containsExactly("idle", "u", "0", "Successful");
        assertThat(fake.committedOffsets("idle")).doesNotContainKey(U0);

        ToolRun busy = run("--delete-offsets", "--group", "busy", "--topic", "t");
        assertThat(busy.exit()).isEqualTo(1);
        assertThat(rows(busy.out()).get(1)).startsWith("busy", "t", "0", "Error:", "GROUP_SUBSCRIBED_TO_TOPIC");
        assertThat(rows(busy.out()).get(3)).containsExactly("busy", "t", "2", "Successful");
        assertThat(busy.err()).contains("2 partition(s) kept their offsets");
    }

    @Test
    void offsetsOfADeletedTopicCanStillBeDeleted() {
        fake.committed.get("idle").put(new TopicPartition("gone", 3), 9L);
        ToolRun r = run("--delete-offsets", "--group", "idle", "--topic", "gone");
        assertThat(r.exit()).isZero();
        assertThat(rows(r.out()).get(1)).containsExactly("idle", "gone", "3", "Successful");
    }

    @Test
    void conflictingOrMissingFlagsExit2AndSendNothing() {
        String[][] cases = {
            {"--list", "--describe"},
            {"--list", "--group", "g"},
            {"--describe"},
            {"--describe", "--group", "g", "--members", "--history"},
            {"--describe", "--group", "g", "--to-earliest"},
            {"--describe", "--group", "g", "--topic", "t"},
            {"--describe", "--group", "g", "--max-entries", "5"},
            {"--describe", "--group", "g", "--history", "--max-entries", "0"},
            {"--reset-offsets", "--group", "g", "--topic", "t"},
            {"--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--to-latest"},
            {"--reset-offsets", "--group", "g", "--to-earliest"},
            {"--reset-offsets", "--group", "g", "--topic", "t", "--all-topics", "--to-earliest"},
            {"--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--execute", "--dry-run"},
            {"--reset-offsets", "--group", "g", "--group", "h", "--topic", "t", "--to-earliest"},
            {"--reset-offsets", "--group", "g", "--topic", "t:x", "--to-earliest"},
            {"--reset-offsets", "--group", "g", "--topic", ":1", "--to-earliest"},
            {"--reset-offsets", "--group", "g", "--topic", "t", "--to-offset", "-1"},
            {"--reset-offsets", "--group", "g", "--topic", "t", "--to-datetime", "yesterday"},
            {"--reset-offsets", "--group", "g", "--topic", "t", "--by-duration", "1h"},
            {"--reset-offsets", "--group", "g", "--topic", "t", "--by-duration", "-PT1H"},
            {"--delete", "--group", "g", "--execute"},
            {"--delete-offsets", "--group", "g"},
            {"--delete-offsets", "--group", "g", "--all-topics"},
            {"--describe", "--group", ""},
            {"--describe", "--group", "g".repeat(32_768)},
        };
        for (String[] args : cases) {
            ToolRun r = run(args);
            assertThat(r.exit()).as(String.join(" ", args) + "\n" + r.err()).isEqualTo(2);
            assertThat(r.err()).as(String.join(" ", args)).isNotBlank();
        }
        assertThat(adminsCreated).as("no client was created for bad arguments").hasValue(0);

        ToolRun noBootstrap = ToolRun.run(Tools.commandLine(new ConsumerGroupsCommand()), "--list");
        assertThat(noBootstrap.exit()).isEqualTo(2);
        assertThat(noBootstrap.err()).contains("--bootstrap-server is required");
    }

    @Test
    void errorMessagesNameTheConflict() {
        assertThat(run("--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--to-latest")
                        .err())
                .contains("give one reset target, not --to-earliest and --to-latest");
        assertThat(run("--describe", "--group", "g", "--to-earliest").err())
                .contains("--to-earliest goes with --reset-offsets");
        assertThat(run("--reset-offsets", "--group", "g", "--topic", "t", "--to-datetime", "yesterday")
                        .err())
                .contains("'yesterday' is not a date-time like 2026-12-04T13:00:00.000");
        assertThat(run("--reset-offsets", "--group", "g", "--topic", "t", "--by-duration", "1h")
                        .err())
                .contains("not an ISO-8601 duration like PT1H30M");
    }

    @Test
    void clientPropertiesLayerToolDefaultsFileAndFlags(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("admin.properties");
        Files.writeString(file, "retries=9\nclient.id=from-file\n");
        ToolRun r = run("--list", "--command-config", file.toString(), "--command-property", "client.id=flag");
        assertThat(r.exit()).isZero();
        Properties p = adminProps.get();
        assertThat(p.getProperty("bootstrap.servers")).isEqualTo("h:1");
        assertThat(p.getProperty("retries")).isEqualTo("9");
        assertThat(p.getProperty("client.id")).isEqualTo("flag");
        assertThat(p.getProperty("socket.connection.setup.timeout.ms")).isEqualTo("5000");

        ToolRun missing = run("--list", "--command-config", dir.resolve("nope").toString());
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("cannot be read");
    }
}
