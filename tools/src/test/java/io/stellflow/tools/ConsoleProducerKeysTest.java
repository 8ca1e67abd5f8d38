package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --producer-property} keys the producer cannot honour fail the tool at once with the reason,
 * and keys it does not read are named in a WARN (issue #22, defect 4: both used to exit 0 without a
 * word).
 */
@IntegrationTest
class ConsoleProducerKeysTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final LogLines keysLog = LogLines.of("io.stellflow.client.ClientKeys");

    private static ToolRun produce(String... args) {
        ConsoleProducer tool = new ConsoleProducer();
        tool.in = new ByteArrayInputStream("x\n".getBytes(StandardCharsets.UTF_8));
        return ToolRun.run(Tools.commandLine(tool), args);
    }

    @Test
    void anUnsupportedKeyIsRefusedAndAnUnknownOneWarned() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String bootstrap = "127.0.0.1:" + server.port();
            ToolRun created = ToolRun.run(
                    Tools.commandLine(new TopicsCommand()),
                    "--bootstrap-server",
                    bootstrap,
                    "--create",
                    "--topic",
                    "demo");
            assertThat(created.exit()).as(created.err()).isZero();

            long startNs = System.nanoTime();
            ToolRun ssl = produce(
                    "--bootstrap-server", bootstrap, "--topic", "demo", "--producer-property", "security.protocol=SSL");
            assertThat(ssl.exit()).isEqualTo(1);
            assertThat(ssl.err())
                    .isEqualTo("error: security.protocol=SSL is not supported: the client speaks PLAINTEXT only (no TLS"
                            + " or SASL); use security.protocol=PLAINTEXT or leave the key out\n");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs))
                    .isLessThan(10_000);

            ToolRun txn = produce(
                    "--bootstrap-server", bootstrap, "--topic", "demo", "--producer-property", "transactional.id=tx");
            assertThat(txn.exit()).isEqualTo(1);
            assertThat(txn.err())
                    .isEqualTo("error: transactional.id=tx is not supported by the console producer (it sends no"
                            + " transactions); remove the key\n");

            ToolRun typo =
                    produce("--bootstrap-server", bootstrap, "--topic", "demo", "--producer-property", "no.such.key=1");
            assertThat(typo.exit()).as(typo.err()).isZero();
            assertThat(keysLog.messages())
                    .containsExactly("ignoring unknown producer config key(s) [no.such.key]: the producer does not"
                            + " read them");
        }
    }
}
