package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * One meaning per flag in the four control-plane tools (metadata-quorum, cluster, configs,
 * leader-election), against a real combined node: {@code --bootstrap-server} takes the broker's
 * address and reaches the controllers through it, {@code --bootstrap-controller} takes the
 * controller's, and an address of the wrong kind (or one nothing listens on) fails within seconds
 * with an error that names it, never a gRPC status.
 */
@IntegrationTest
class BootstrapFlagsTest {
    /** What a user accepts before an error: well under the old 16 s hang. */
    private static final long FAST_MS = 3_000;

    @TempDir
    Path dir;

    private record Tool(String name, Supplier<Object> command, List<String> args) {}

    private static final List<Tool> TOOLS = List.of(
            new Tool("metadata-quorum", MetadataQuorumCommand::new, List.of("describe")),
            new Tool("cluster", ClusterCommand::new, List.of()),
            new Tool("configs", ConfigsCommand::new, List.of("--topic", "t1", "--describe")),
            new Tool(
                    "leader-election",
                    LeaderElectionCommand::new,
                    List.of("--election-type", "preferred", "--all-topic-partitions")));

    private static ToolRun run(Tool tool, String flag, String address) {
        String[] args = new String[2 + tool.args().size()];
        args[0] = flag;
        args[1] = address;
        for (int i = 0; i < tool.args().size(); i++) {
            args[2 + i] = tool.args().get(i);
        }
        return ToolRun.run(new CommandLine(tool.command().get()), args);
    }

    @Test
    void everyControllerToolTakesBrokersWithBootstrapServerAndControllersWithBootstrapController() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            String controller = server.controller().rpcEndpoint();
            ToolRun create = ToolRun.run(
                    Tools.commandLine(new TopicsCommand()), "--bootstrap-server", broker, "--create", "--topic", "t1");
            assertThat(create.exit()).as(create.err()).isZero();

            for (Tool tool : TOOLS) {
                ToolRun viaBroker = run(tool, "--bootstrap-server", broker);
                ToolRun viaController = run(tool, "--bootstrap-controller", controller);
                assertThat(viaBroker.exit())
                        .as(tool.name() + " via broker: " + viaBroker.err())
                        .isZero();
                assertThat(viaController.exit())
                        .as(tool.name() + " via controller: " + viaController.err())
                        .isZero();
                assertThat(viaBroker.err()).isEmpty();
                if (!tool.name().equals("leader-election")) {
                    // The same answer whichever way the controller was reached (elections change it).
                    assertThat(viaBroker.out()).as(tool.name()).isEqualTo(viaController.out());
                }
                assertThat(viaBroker.out()).as(tool.name()).isNotEmpty();
            }
        }
    }

    @Test
    void aPortOfTheWrongKindIsNamedAsSuchWithinSeconds() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            String controller = server.controller().rpcEndpoint();
            for (Tool tool : TOOLS) {
                long start = System.nanoTime();
                ToolRun controllerAsServer = run(tool, "--bootstrap-server", controller);
                long controllerAsServerMs = (System.nanoTime() - start) / 1_000_000;
                assertThat(controllerAsServer.exit()).as(tool.name()).isEqualTo(1);
                assertThat(controllerAsServer.err())
                        .as(tool.name())
                        .isEqualTo("error: " + controller
                                + " is a control-plane port (a controller); use --bootstrap-controller or a broker"
                                + " address\n");
                assertThat(controllerAsServerMs)
                        .as(tool.name() + " ms to the error")
                        .isLessThan(FAST_MS);

                start = System.nanoTime();
                ToolRun brokerAsController = run(tool, "--bootstrap-controller", broker);
                long brokerAsControllerMs = (System.nanoTime() - start) / 1_000_000;
                assertThat(brokerAsController.exit()).as(tool.name()).isEqualTo(1);
                assertThat(brokerAsController.err())
                        .as(tool.name())
                        .isEqualTo("error: " + broker + " is a broker (data-plane) port; use --bootstrap-server or a"
                                + " controller address (controller.listener)\n");
                assertThat(brokerAsControllerMs)
                        .as(tool.name() + " ms to the error")
                        .isLessThan(FAST_MS);
                assertThat(controllerAsServer.out() + brokerAsController.out()).isEmpty();
            }
        }
    }

    @Test
    void nothingListeningFailsWithinSecondsNamingTheAddressAndNoGrpcStatus() throws Exception {
        String nothing = "127.0.0.1:" + LoopbackPorts.pick(1)[0];
        for (Tool tool : TOOLS) {
            for (String flag : List.of("--bootstrap-server", "--bootstrap-controller")) {
                long start = System.nanoTime();
                ToolRun r = run(tool, flag, nothing);
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertThat(r.exit()).as(tool.name() + " " + flag).isEqualTo(1);
                assertThat(r.err())
                        .as(tool.name() + " " + flag)
                        .startsWith("error: no " + (flag.equals("--bootstrap-server") ? "broker" : "controller")
                                + " reachable at " + flag + " " + nothing + " (" + nothing + ": ")
                        .doesNotContain("Status{")
                        .doesNotContain("DEADLINE_EXCEEDED");
                assertThat(ms).as(tool.name() + " " + flag + " ms to the error").isLessThan(FAST_MS);
            }
        }
    }

    @Test
    void bothOrNeitherBootstrapFlagIsAUsageError() {
        for (Tool tool : TOOLS) {
            ToolRun neither = ToolRun.run(
                    new CommandLine(tool.command().get()), tool.args().toArray(String[]::new));
            assertThat(neither.exit()).as(tool.name()).isEqualTo(2);
            assertThat(neither.err())
                    .as(tool.name())
                    .contains("give exactly one of --bootstrap-server (brokers) and --bootstrap-controller");
        }
    }
}
