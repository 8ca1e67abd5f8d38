package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh} takes one endpoint for every action: each of create, create with
 * configs, alter, list, describe and delete works with the broker's address ({@code
 * --bootstrap-server}) and with the controller's ({@code --bootstrap-controller}), against a real
 * combined node; an address of the wrong kind is named as such within seconds (before: {@code
 * NETWORK_ERROR}, or an action refused for the flag it was given).
 */
@IntegrationTest
class TopicsOneEndpointTest {
    private static final long FAST_MS = 3_000;

    @TempDir
    Path dir;

    static ToolRun run(String... args) {
        return ToolRun.run(Tools.commandLine(new TopicsCommand()), args);
    }

    @Test
    void everyActionWorksThroughEitherEndpoint() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String[][] endpoints = {
                {"--bootstrap-server", "127.0.0.1:" + server.port()},
                {"--bootstrap-controller", server.controller().rpcEndpoint()}
            };
            for (String[] e : endpoints) {
                String flag = e[0];
                String at = e[1];
                String plain = flag.equals("--bootstrap-server") ? "plain-b" : "plain-c";
                String tuned = flag.equals("--bootstrap-server") ? "tuned-b" : "tuned-c";

                ToolRun create = run(flag, at, "--create", "--topic", plain, "--partitions", "2");
                assertThat(create.exit()).as(flag + " create: " + create.err()).isZero();
                ToolRun createWithConfig = run(
                        flag,
                        at,
                        "--create",
                        "--topic",
                        tuned,
                        "--replication-factor",
                        "1",
                        "--config",
                        "retention.ms=60000");
                assertThat(createWithConfig.exit())
                        .as(flag + " create --config: " + createWithConfig.err())
                        .isZero();
                assertThat(server.controller().image().topic(tuned).config()).containsEntry("retention.ms", "60000");

                ToolRun alter = run(flag, at, "--alter", "--topic", plain, "--partitions", "3");
                assertThat(alter.exit()).as(flag + " alter: " + alter.err()).isZero();
                assertThat(server.controller().image().topic(plain).partitions())
                        .hasSize(3);

                ToolRun list = run(flag, at, "--list");
                assertThat(list.exit()).as(flag + " list: " + list.err()).isZero();
                assertThat(list.out().lines().toList()).contains(plain, tuned);

                Wait.untilPasses(
                        java.time.Duration.ofSeconds(30),
                        () -> {
                            ToolRun describe = run(flag, at, "--describe", "--topic", plain);
                            assertThat(describe.exit())
                                    .as(flag + " describe: " + describe.err())
                                    .isZero();
                            assertThat(describe.out()).startsWith("Topic: " + plain + "\tPartitionCount: 3\t");
                        },
                        "describe shows the third partition");

                ToolRun delete = run(flag, at, "--delete", "--topic", tuned);
                assertThat(delete.exit()).as(flag + " delete: " + delete.err()).isZero();
                assertThat(delete.out()).isEqualTo("Deleted topic " + tuned + ".\n");
                assertThat(server.controller().image().topic(tuned)).isNull();
            }
        }
    }

    @Test
    void aPortOfTheWrongKindIsNamedForEveryActionWithinSeconds() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            String controller = server.controller().rpcEndpoint();
            String[][] actions = {
                {"--list"},
                {"--describe"},
                {"--create", "--topic", "never"},
                {"--delete", "--topic", "never"},
                {"--alter", "--topic", "never", "--partitions", "2"}
            };
            for (String[] action : actions) {
                String[] asServer = concat(new String[] {"--bootstrap-server", controller}, action);
                long start = System.nanoTime();
                ToolRun r = run(asServer);
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertThat(r.exit()).as(String.join(" ", asServer)).isEqualTo(1);
                assertThat(r.err())
                        .isEqualTo("error: " + controller
                                + " is a control-plane port (a controller); use --bootstrap-controller or a broker"
                                + " address\n");
                assertThat(ms)
                        .as(String.join(" ", asServer) + " ms to the error")
                        .isLessThan(FAST_MS);

                String[] asController = concat(new String[] {"--bootstrap-controller", broker}, action);
                start = System.nanoTime();
                r = run(asController);
                ms = (System.nanoTime() - start) / 1_000_000;
                assertThat(r.exit()).as(String.join(" ", asController)).isEqualTo(1);
                assertThat(r.err())
                        .isEqualTo("error: " + broker + " is a broker (data-plane) port; use --bootstrap-server or a"
                                + " controller address (controller.listener)\n");
                assertThat(ms)
                        .as(String.join(" ", asController) + " ms to the error")
                        .isLessThan(FAST_MS);
            }
            assertThat(server.controller().image().topic("never")).isNull();
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
