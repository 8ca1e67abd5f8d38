package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-consumer-groups.sh} with nothing listening at {@code --bootstrap-server}: the real
 * admin client fails within seconds, names the address and says what to check (issue #22: no silent
 * hangs), exit 1; each retry of the coordinator lookup is logged with its cause.
 */
@IntegrationTest
class ConsumerGroupsUnreachableTest {
    @RegisterExtension
    final LogLines retries = LogLines.of("io.stellflow.client.AdminGroupCalls");

    @Test
    void aControllerPortOrAnUnknownHostIsNamedAsTheOtherToolsDo(@TempDir Path dir) throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String controller = server.controller().rpcEndpoint();
            ToolRun r = ToolRun.run(
                    Tools.commandLine(new ConsumerGroupsCommand()), "--bootstrap-server", controller, "--list");
            assertThat(r.exit()).as(r.err()).isEqualTo(1);
            assertThat(r.err())
                    .isEqualTo("error: " + controller + " is a control-plane port (a controller); use"
                            + " --bootstrap-controller or a broker address\n");
        }
        ToolRun unknown = ToolRun.run(
                Tools.commandLine(new ConsumerGroupsCommand()),
                "--bootstrap-server",
                "nosuchhost.invalid:9092",
                "--list");
        assertThat(unknown.exit()).as(unknown.err()).isEqualTo(1);
        assertThat(unknown.err()).isEqualTo("error: nosuchhost.invalid:9092: unknown host nosuchhost.invalid\n");
    }

    @Test
    void anUnreachableBootstrapFailsFastAndSaysWhy() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String bootstrap = "127.0.0.1:" + port;
        for (String[] args : new String[][] {
            {"--bootstrap-server", bootstrap, "--list"},
            {"--bootstrap-server", bootstrap, "--describe", "--group", "g"},
            {"--bootstrap-server", bootstrap, "--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest"}
        }) {
            long startNs = System.nanoTime();
            ToolRun r = ToolRun.run(Tools.commandLine(new ConsumerGroupsCommand()), args);
            long ms = (System.nanoTime() - startNs) / 1_000_000;
            assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(1);
            assertThat(r.err())
                    .as(String.join(" ", args))
                    .startsWith("error: cannot reach the cluster at " + bootstrap)
                    .contains("check --bootstrap-server");
            // the tool's retries: back-offs of 100, 200, 400, 800 and 1000 ms at most
            assertThat(ms).as(String.join(" ", args) + " took " + ms + " ms").isLessThan(6_000);
        }
        // --list fails on its first Metadata; --describe and --reset-offsets retry the lookup 5 times each
        assertThat(retries.messages())
                .hasSize(10)
                .allSatisfy(m -> assertThat(m).contains("cannot connect to " + bootstrap, "retry "))
                .anySatisfy(m -> assertThat(m).contains("retry 5 of 5 in 1000 ms"));
    }
}
