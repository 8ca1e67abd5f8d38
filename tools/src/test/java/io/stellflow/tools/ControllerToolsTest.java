package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.Endpoint;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The commands behind {@code bin/stellflow-metadata-quorum.sh}, {@code bin/stellflow-cluster.sh} and
 * {@code bin/stellflow-configs.sh}, run in-process (picocli, as the scripts' main methods do) against
 * a running 3-controller quorum.
 */
@IntegrationTest
class ControllerToolsTest {
    @TempDir
    Path dir;

    static ToolRun run(Object command, String... args) {
        return ToolRun.run(new CommandLine(command), args);
    }

    static long field(String out, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + ": (-?\\d+)$").matcher(out);
        assertThat(m.find()).as("'%s:' line in%n%s", name, out).isTrue();
        return Long.parseLong(m.group(1));
    }

    /** Data lines (after the header line starting with {@code header}) split on whitespace, by first column. */
    static Map<Integer, List<String>> table(String out, String header) {
        Map<Integer, List<String>> rows = new TreeMap<>();
        boolean inTable = false;
        for (String line : out.split("\n")) {
            if (line.startsWith(header + " ")) {
                inTable = true;
            } else if (inTable && !line.isBlank()) {
                List<String> cols = Arrays.asList(line.trim().split("\\s+"));
                rows.put(Integer.parseInt(cols.get(0)), cols);
            }
        }
        assertThat(inTable).as("table '%s' in%n%s", header, out).isTrue();
        return rows;
    }

    @Test
    void quorumDescribeAndClusterPrintVotersLeaderTermCommittedIndexLagAndBrokers() throws Exception {
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
                p.setProperty("broker.session.timeout.ms", "600000");
                p.setProperty("cluster.id", "tools-test");
                servers.add(ControllerServer.start(ControllerConfig.fromProperties(p)));
            }
            long[] epochs = new long[3];
            try (ControllerClient client = ControllerClient.builder(bootstrap)
                    .requestTimeout(Duration.ofSeconds(60))
                    .build()) {
                // Broker 1 (rack r1) is unfenced, broker 2 (rack r2) stays fenced (never caught up).
                for (int id = 1; id <= 2; id++) {
                    RegisterBrokerResponse r = client.registerBroker(RegisterBrokerRequest.newBuilder()
                            .setBrokerId(id)
                            .setIncarnationId(MetadataRecords.uuid(UUID.randomUUID()))
                            .addListeners(Endpoint.newBuilder()
                                    .setName("PLAINTEXT")
                                    .setHost("127.0.0.1")
                                    .setPort(9100 + id))
                            .setRack("r" + id)
                            .build());
                    assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
                    epochs[id] = r.getBrokerEpoch();
                }
                assertThat(client.brokerHeartbeat(BrokerHeartbeatRequest.newBuilder()
                                        .setBrokerId(1)
                                        .setBrokerEpoch(epochs[1])
                                        .setMetadataOffset(Long.MAX_VALUE)
                                        .build())
                                .getFenced())
                        .isFalse();
                // Let every voter catch up, so the lag column is 0 for all three.
                DescribeQuorumResponse q = client.describeQuorum();
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (!allCaughtUp(q)) {
                    assertThat(System.nanoTime()).as("voters caught up: %s", q).isLessThan(deadline);
                    Thread.sleep(50);
                    q = client.describeQuorum();
                }

                ToolRun quorum = run(new MetadataQuorumCommand(), "--bootstrap-controller", bootstrap, "describe");
                assertThat(quorum.exit()).as(quorum.err()).isZero();
                assertThat(quorum.err()).isEmpty();
                DescribeQuorumResponse after = client.describeQuorum();
                int leader = (int) field(quorum.out(), "LeaderId");
                assertThat(leader).isEqualTo(after.getLeaderId()).isBetween(1, 3);
                assertThat(quorum.out()).startsWith("ClusterId: tools-test\n");
                assertThat(servers.get(leader - 1).isActive()).isTrue();
                assertThat(field(quorum.out(), "Term"))
                        .isEqualTo(after.getTerm())
                        .isPositive();
                long committed = field(quorum.out(), "CommittedIndex");
                assertThat(committed)
                        .isGreaterThanOrEqualTo(servers.get(leader - 1).image().offset())
                        .isLessThanOrEqualTo(after.getCommittedIndex());
                assertThat(field(quorum.out(), "LastIndex")).isGreaterThanOrEqualTo(committed);
                Map<Integer, List<String>> rows = table(quorum.out(), "Id");
                assertThat(rows.keySet()).containsExactly(1, 2, 3);
                for (int id = 1; id <= 3; id++) {
                    List<String> row = rows.get(id);
                    // Id RaftEndpoint MatchIndex Lag LastContactMs Status
                    assertThat(row).hasSize(6);
                    assertThat(row.get(1)).isEqualTo(voters.get(id - 1).substring(2));
                    assertThat(Long.parseLong(row.get(2))).isGreaterThanOrEqualTo(committed);
                    assertThat(row.get(3)).isEqualTo("0");
                    assertThat(Long.parseLong(row.get(4))).isGreaterThanOrEqualTo(0);
                    assertThat(row.get(5)).isEqualTo(id == leader ? "Leader" : "Follower");
                }

                ToolRun cluster = run(new ClusterCommand(), "--bootstrap-controller", bootstrap);
                assertThat(cluster.exit()).as(cluster.err()).isZero();
                assertThat(cluster.out()).startsWith("ClusterId: tools-test\n");
                assertThat(field(cluster.out(), "ActiveController")).isEqualTo(leader);
                assertThat(field(cluster.out(), "MetadataOffset")).isPositive();
                Map<Integer, List<String>> brokers = table(cluster.out(), "Broker");
                assertThat(brokers.keySet()).containsExactly(1, 2);
                // Broker Fenced Rack Epoch Incarnation Listeners
                assertThat(brokers.get(1).subList(1, 4)).containsExactly("false", "r1", String.valueOf(epochs[1]));
                assertThat(brokers.get(2).subList(1, 4)).containsExactly("true", "r2", String.valueOf(epochs[2]));
                assertThat(brokers.get(1).get(5)).isEqualTo("PLAINTEXT://127.0.0.1:9101");
                assertThat(brokers.get(2).get(5)).isEqualTo("PLAINTEXT://127.0.0.1:9102");

                configsCommandAltersAndDescribesTopicOverrides(client, bootstrap, servers.get(leader - 1));
            }
        } finally {
            servers.forEach(ControllerServer::close);
        }
    }

    @Test
    void withNoControllerReachableBothToolsFailWithAClearErrorAndStatus1() throws Exception {
        String nothing = "127.0.0.1:" + LoopbackPorts.pick(1)[0];
        ToolRun quorum =
                run(new MetadataQuorumCommand(), "--bootstrap-controller", nothing, "--timeout-ms", "300", "describe");
        assertThat(quorum.exit()).isEqualTo(1);
        assertThat(quorum.out()).isEmpty();
        assertThat(quorum.err()).startsWith("error: no controller reachable at --bootstrap-controller " + nothing);
        ToolRun cluster = run(new ClusterCommand(), "--bootstrap-controller", nothing, "--timeout-ms", "300");
        assertThat(cluster.exit()).isEqualTo(1);
        assertThat(cluster.err()).startsWith("error: no controller reachable at --bootstrap-controller " + nothing);
        ToolRun bad = run(new ClusterCommand());
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("give exactly one of --bootstrap-server (brokers) and --bootstrap-controller");
    }

    private static void configsCommandAltersAndDescribesTopicOverrides(
            ControllerClient client, String bootstrap, ControllerServer active) {
        assertThat(client.createTopics(CreateTopicsRequest.newBuilder()
                                .addTopics(CreatableTopic.newBuilder()
                                        .setName("cfg")
                                        .setNumPartitions(1)
                                        .setReplicationFactor(1)
                                        .putConfig("segment.ms", "600000"))
                                .build())
                        .getTopics(0)
                        .getError())
                .isEqualTo(ErrorCode.NONE);
        ToolRun alter = run(
                new ConfigsCommand(),
                "--bootstrap-controller",
                bootstrap,
                "--entity-type",
                "topics",
                "--entity-name",
                "cfg",
                "--alter",
                "--add-config",
                "retention.ms=1000,cleanup.policy=[compact,delete]",
                "--add-config",
                "segment.bytes=4096",
                "--delete-config",
                "segment.ms");
        assertThat(alter.exit()).as(alter.err()).isZero();
        assertThat(alter.out())
                .isEqualTo("Completed updating config for topic cfg.\nConfigs for topic cfg:\n"
                        + "  cleanup.policy=compact,delete\n  retention.ms=1000\n  segment.bytes=4096\n");
        assertThat(active.image().topic("cfg").config())
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("cleanup.policy", "compact,delete", "retention.ms", "1000", "segment.bytes", "4096"));

        ToolRun describe =
                run(new ConfigsCommand(), "--bootstrap-controller", bootstrap, "--topic", "cfg", "--describe");
        assertThat(describe.exit()).as(describe.err()).isZero();
        assertThat(describe.out()).isEqualTo(alter.out().substring(alter.out().indexOf('\n') + 1));

        assertThat(alter.err()).as("segment.ms was set").isEmpty();
        ToolRun unsetKey = run(
                new ConfigsCommand(),
                "--bootstrap-controller",
                bootstrap,
                "--topic",
                "cfg",
                "--alter",
                "--delete-config",
                "segment.ms,retention.ms");
        assertThat(unsetKey.exit()).as(unsetKey.err()).isZero();
        assertThat(unsetKey.err()).isEqualTo("note: segment.ms is not set on topic cfg; nothing to delete\n");
        assertThat(active.image().topic("cfg").config()).doesNotContainKey("retention.ms");
        ToolRun restore = run(
                new ConfigsCommand(),
                "--bootstrap-controller",
                bootstrap,
                "--topic",
                "cfg",
                "--alter",
                "--add-config",
                "retention.ms=1000");
        assertThat(restore.exit()).as(restore.err()).isZero();

        ToolRun bad = run(
                new ConfigsCommand(),
                "--bootstrap-controller",
                bootstrap,
                "--topic",
                "cfg",
                "--alter",
                "--add-config",
                "retention.ms=5,segment.bytes=10");
        assertThat(bad.exit()).isEqualTo(1);
        assertThat(bad.err()).startsWith("error: INVALID_CONFIG").contains("segment.bytes=10 must be >= 1024");
        assertThat(active.image().topic("cfg").config()).containsEntry("retention.ms", "1000");

        ToolRun alterAll = run(
                new ConfigsCommand(), "--bootstrap-controller", bootstrap, "--alter", "--add-config", "retention.ms=1");
        assertThat(alterAll.exit()).isEqualTo(2);
        assertThat(alterAll.err()).contains("--alter needs --entity-name");

        ToolRun unknown =
                run(new ConfigsCommand(), "--bootstrap-controller", bootstrap, "--topic", "nope", "--describe");
        assertThat(unknown.exit()).isEqualTo(1);
        assertThat(unknown.err()).startsWith("error: UNKNOWN_TOPIC_OR_PARTITION");
        ToolRun nothing = run(new ConfigsCommand(), "--bootstrap-controller", bootstrap, "--topic", "cfg", "--alter");
        assertThat(nothing.exit()).isEqualTo(2);
        assertThat(nothing.err()).contains("--alter needs --add-config and/or --delete-config");
    }

    private static boolean allCaughtUp(DescribeQuorumResponse q) {
        return q.getVotersList().stream().allMatch(v -> v.getLag() == 0 && v.getMatchIndex() >= q.getCommittedIndex());
    }
}
