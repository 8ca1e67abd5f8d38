package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.LeaderElectionTest;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bin/stellflow-leader-election.sh} ({@link LeaderElectionCommand}) run in-process against one
 * controller with test-driven brokers: per-partition lines, the summary, exit codes 0/1/2, and that
 * argument errors write nothing.
 */
@IntegrationTest
class LeaderElectionCommandTest {
    @TempDir
    Path dir;

    static ToolRun run(String... args) {
        return ToolRun.run(new CommandLine(new LeaderElectionCommand()), args);
    }

    /** {@code --bootstrap-controller <bootstrap> --election-type <type> <scope...>}. */
    static ToolRun elect(String bootstrap, String type, String... scope) {
        String[] args = new String[4 + scope.length];
        args[0] = "--bootstrap-controller";
        args[1] = bootstrap;
        args[2] = "--election-type";
        args[3] = type;
        System.arraycopy(scope, 0, args, 4, scope.length);
        return run(args);
    }

    @Test
    void preferredAndUncleanElectionsPrintOneLinePerPartitionAndExitByOutcome() throws Exception {
        try (LeaderElectionTest.Setup s = new LeaderElectionTest.Setup(
                dir, 3, LeaderElectionTest.props("auto.leader.rebalance.enable", "false"))) {
            String bootstrap = s.cluster.bootstrap();
            s.createTopic("lt", 3, 3, Map.of());
            long offset = s.image().offset();

            // Argument errors: status 2, nothing sent.
            List<String[]> usage = List.of(
                    new String[] {"--bootstrap-controller", bootstrap, "--all-topic-partitions"},
                    new String[] {"--bootstrap-controller", bootstrap, "--election-type", "sideways", "--topic", "lt"},
                    new String[] {"--bootstrap-controller", bootstrap, "--election-type", "preferred"},
                    new String[] {
                        "--bootstrap-controller",
                        bootstrap,
                        "--election-type",
                        "preferred",
                        "--topic",
                        "lt",
                        "--all-topic-partitions"
                    },
                    new String[] {
                        "--bootstrap-controller", bootstrap, "--election-type", "preferred", "--partition", "0"
                    },
                    new String[] {
                        "--bootstrap-controller",
                        bootstrap,
                        "--election-type",
                        "preferred",
                        "--topic",
                        "lt",
                        "--partition",
                        "-1"
                    });
            List<String> usageErrors = new ArrayList<>();
            for (String[] args : usage) {
                ToolRun r = run(args);
                assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(2);
                assertThat(r.out()).isEmpty();
                usageErrors.add(r.err().lines().findFirst().orElse(""));
            }
            assertThat(usageErrors)
                    .containsExactly(
                            "Missing required option: '--election-type=<electionType>'",
                            "--election-type must be preferred or unclean, not 'sideways'",
                            "give either --topic (with optional --partition) or --all-topic-partitions",
                            "give either --topic (with optional --partition) or --all-topic-partitions",
                            "--partition needs --topic",
                            "--partition must be >= 0: [-1]");
            assertThat(s.image().offset()).as("nothing written").isEqualTo(offset);

            // Every preferred replica leads: nothing to do, status 0.
            ToolRun none = elect(bootstrap, "PREFERRED", "--all-topic-partitions");
            assertThat(none.exit()).as(none.err()).isZero();
            assertThat(none.out().lines().toList())
                    .hasSize(4)
                    .startsWith("lt-0: ELECTION_NOT_NEEDED: the preferred replica "
                            + s.partition("lt", 0).replicas().get(0) + " is the leader already")
                    .endsWith("preferred election: 0 elected, 3 not needed, 0 failed");

            // Broker 1 restarts: its preferred partition is led by another and 1 is out of the ISR.
            s.fence(1);
            s.unfence(1);
            int p1 = -1;
            for (PartitionImage p : s.image().topic("lt").partitions()) {
                if (p.replicas().get(0) == 1) {
                    p1 = p.partition();
                }
            }
            String part = String.valueOf(p1);
            ToolRun notAvailable = elect(bootstrap, "preferred", "--topic", "lt", "--partition", part);
            assertThat(notAvailable.exit()).isEqualTo(1);
            assertThat(notAvailable.out())
                    .startsWith(
                            "lt-" + p1 + ": PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica 1 is not in the ISR")
                    .endsWith("preferred election: 0 elected, 0 not needed, 1 failed\n");
            assertThat(notAvailable.err()).isEqualTo("error: the election failed for 1 of 1 partitions\n");

            List<Integer> isr = new ArrayList<>(s.partition("lt", p1).isr());
            isr.add(1);
            assertThat(s.alterIsr("lt", p1, isr).getError()).isEqualTo(ErrorCode.NONE);
            int epochBefore = s.partition("lt", p1).leaderEpoch();
            ToolRun elected = elect(bootstrap, "preferred", "--topic", "lt", "--partition", part);
            assertThat(elected.exit()).as(elected.err()).isZero();
            assertThat(s.partition("lt", p1).leader()).isEqualTo(1);
            assertThat(s.partition("lt", p1).leaderEpoch()).isEqualTo(epochBefore + 1);
            assertThat(elected.out())
                    .isEqualTo("lt-" + p1 + ": elected leader 1 (leader epoch " + (epochBefore + 1) + ")\n"
                            + "preferred election: 1 elected, 0 not needed, 0 failed\n");
            assertThat(elected.err()).isEmpty();

            // Unclean: lt-0's only ISR member is fenced; the tool elects the first live replica.
            int l0 = s.partition("lt", 0).leader();
            assertThat(s.alterIsr("lt", 0, List.of(l0)).getError()).isEqualTo(ErrorCode.NONE);
            s.fence(l0);
            PartitionImage off = s.partition("lt", 0);
            assertThat(off.leader()).isEqualTo(PartitionImage.NO_LEADER);
            ToolRun unclean = elect(bootstrap, "unclean", "--topic", "lt", "--partition", "0");
            assertThat(unclean.exit()).as(unclean.err()).isZero();
            PartitionImage now = s.partition("lt", 0);
            assertThat(now.isr()).containsExactly(now.leader());
            assertThat(unclean.out())
                    .isEqualTo("lt-0: elected leader " + now.leader() + " (leader epoch " + (off.leaderEpoch() + 1)
                            + ")\n" + "unclean election: 1 elected, 0 not needed, 0 failed\n");

            ToolRun unknown = elect(bootstrap, "preferred", "--topic", "nope");
            assertThat(unknown.exit()).isEqualTo(1);
            assertThat(unknown.out()).startsWith("nope: UNKNOWN_TOPIC_OR_PARTITION: no topic 'nope'\n");
        }
    }

    @Test
    void withNoControllerReachableItFailsWithStatus1() throws Exception {
        String nothing = "127.0.0.1:" + LoopbackPorts.pick(1)[0];
        ToolRun r = elect(nothing, "preferred", "--timeout-ms", "300", "--all-topic-partitions");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).startsWith("error: no controller reachable at --bootstrap-controller " + nothing);
    }
}
