package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code stellflow-metadata-quorum.sh describe} with one of three controllers stopped: the stopped
 * voter is shown {@code Unreachable} with the time since it last answered, within seconds, and the
 * live ones stay {@code Leader} / {@code Follower}.
 */
@IntegrationTest
class QuorumDeadVoterTest {
    /** The default: short timeouts re-elect and miss heartbeats on a loaded 2-core machine. */
    private static final long ELECTION_TIMEOUT_MS = 1000;

    @TempDir
    Path dir;

    @Test
    void aStoppedControllerIsShownUnreachableWithItsTimeSinceLastContact() throws Exception {
        int[] raft = LoopbackPorts.pick(3);
        int[] rpc = LoopbackPorts.pick(3);
        List<String> voters = new ArrayList<>();
        List<String> endpoints = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            voters.add((i + 1) + "@127.0.0.1:" + raft[i]);
            endpoints.add("127.0.0.1:" + rpc[i]);
        }
        String bootstrap = String.join(",", endpoints);
        List<ControllerServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                Properties p = new Properties();
                p.setProperty("node.id", String.valueOf(i + 1));
                p.setProperty("controller.quorum.voters", String.join(",", voters));
                p.setProperty("controller.listener", endpoints.get(i));
                p.setProperty("metadata.log.dir", dir.resolve("c" + (i + 1)).toString());
                p.setProperty("controller.quorum.election.timeout.ms", String.valueOf(ELECTION_TIMEOUT_MS));
                servers.add(ControllerServer.start(ControllerConfig.fromProperties(p)));
            }
            // Every voter answering: all rows Leader or Follower.
            Wait.untilPasses(
                    Duration.ofSeconds(30),
                    () -> {
                        Map<Integer, List<String>> rows = describe(bootstrap);
                        assertThat(rows.values())
                                .extracting(r -> r.get(5))
                                .containsExactlyInAnyOrder("Leader", "Follower", "Follower");
                    },
                    "a leader and two live followers");
            int leader = leaderOf(describe(bootstrap));
            int dead = leader == 3 ? 2 : 3;
            servers.get(dead - 1).close();
            long stoppedNs = System.nanoTime();

            AtomicReference<Map<Integer, List<String>>> seen = new AtomicReference<>();
            Wait.untilPasses(
                    Duration.ofSeconds(10),
                    () -> {
                        seen.set(describe(bootstrap));
                        assertThat(seen.get().get(dead).get(5)).isEqualTo("Unreachable");
                    },
                    "controller " + dead + " shown Unreachable");
            long tookMs = Duration.ofNanos(System.nanoTime() - stoppedNs).toMillis();
            // 2.5 election timeouts (2.5 s) without an answer, plus describe rounds.
            assertThat(tookMs).as("time to show the dead voter").isLessThan(5_000);
            List<String> row = seen.get().get(dead);
            assertThat(Long.parseLong(row.get(4)))
                    .as("LastContactMs of the dead voter")
                    .isGreaterThanOrEqualTo(2 * ELECTION_TIMEOUT_MS + ELECTION_TIMEOUT_MS / 2);
            // The two live voters: one leads (not necessarily the same one, should an election have
            // happened meanwhile), the other answers it.
            int live = 6 - leader - dead;
            assertThat(List.of(
                            seen.get().get(leader).get(5), seen.get().get(live).get(5)))
                    .containsExactlyInAnyOrder("Leader", "Follower");
        } finally {
            servers.forEach(ControllerServer::close);
        }
    }

    private static Map<Integer, List<String>> describe(String bootstrap) {
        ToolRun r = ToolRun.run(
                new CommandLine(new MetadataQuorumCommand()),
                "--bootstrap-controller",
                bootstrap,
                "--timeout-ms",
                "5000",
                "describe");
        assertThat(r.exit()).as(r.err()).isZero();
        return ControllerToolsTest.table(r.out(), "Id");
    }

    private static int leaderOf(Map<Integer, List<String>> rows) {
        return rows.entrySet().stream()
                .filter(e -> e.getValue().get(5).equals("Leader"))
                .findFirst()
                .orElseThrow()
                .getKey();
    }
}
