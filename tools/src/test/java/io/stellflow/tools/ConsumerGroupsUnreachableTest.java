package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.testsupport.IntegrationTest;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/**
 * {@code stellflow-consumer-groups.sh} with nothing listening at {@code --bootstrap-server}: the real
 * admin client fails within seconds, names the address and says what to check (issue #22: no silent
 * hangs), exit 1.
 */
@IntegrationTest
class ConsumerGroupsUnreachableTest {
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
    }
}
