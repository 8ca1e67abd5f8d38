package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowProducer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-log-dirs.sh --describe} against a real broker with two log dirs: each dir with its
 * partitions, whose sizes equal the bytes of their {@code .log} files on disk; {@code --topic-list}
 * narrows it; a missing topic, an unknown broker id and a missing {@code --describe} fail in one line
 * within seconds.
 */
@IntegrationTest
class LogDirsCommandTest {
    @TempDir
    Path dir;

    private static ToolRun run(String... args) {
        return ToolRun.run(OneLineUsageErrors.commandLine(new LogDirsCommand()), args);
    }

    @Test
    void describesEveryDirAndPartitionWithItsSizeOnDisk() throws Exception {
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", a + "," + b);
        p.setProperty("transport", "nio");
        p.setProperty("metrics.exporter", "none");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(p))) {
            String broker = "127.0.0.1:" + server.port();
            Properties c = new Properties();
            c.setProperty("bootstrap.servers", broker);
            c.setProperty("acks", "1");
            try (StellflowAdmin admin = new StellflowAdmin(c)) {
                admin.createTopic("sized", 2);
                admin.createTopic("other", 1);
            }
            try (StellflowProducer producer = new StellflowProducer(c)) {
                for (int i = 0; i < 5; i++) {
                    producer.send(new ProducerRecord("sized", 0, null, ("value-" + i).getBytes(StandardCharsets.UTF_8)))
                            .get(10, TimeUnit.SECONDS);
                }
            }

            ToolRun r = run("--bootstrap-server", broker, "--describe", "--topic-list", "sized");
            assertThat(r.exit()).as(r.err()).isZero();
            String[] blocks = r.out().split("\n\n");
            assertThat(blocks).hasSize(2);
            String[] dirLines = blocks[0].split("\n");
            assertThat(dirLines[0].split("\\s+"))
                    .containsExactly(
                            "BROKER", "LOG-DIR", "STATE", "TOTAL-BYTES", "USABLE-BYTES", "PARTITIONS", "SIZE-BYTES");
            assertThat(dirLines).hasSize(3);
            long sizeOfPartition0 = Files.size(partitionLog("sized-0", a, b));
            assertThat(sizeOfPartition0).isGreaterThan(0);
            String[] partLines = blocks[1].split("\n");
            assertThat(partLines).hasSize(3);
            String[] p0 = partLines[1].split("\\s+");
            assertThat(p0[2]).isEqualTo("sized");
            assertThat(p0[3]).isEqualTo("0");
            assertThat(p0[4]).isEqualTo(Long.toString(sizeOfPartition0));
            assertThat(p0[5]).isEqualTo("5");
            assertThat(Path.of(p0[1]))
                    .isEqualTo(partitionLog("sized-0", a, b).getParent().getParent());
            String[] p1 = partLines[2].split("\\s+");
            assertThat(p1[2] + " " + p1[3] + " " + p1[4] + " " + p1[5]).isEqualTo("sized 1 0 0");
            long dirTotal = 0;
            for (String line : new String[] {dirLines[1], dirLines[2]}) {
                String[] f = line.split("\\s+");
                assertThat(f[2]).isEqualTo("online");
                assertThat(Long.parseLong(f[3])).isGreaterThan(0);
                dirTotal += Long.parseLong(f[6]);
            }
            assertThat(dirTotal).isEqualTo(sizeOfPartition0);
            assertThat(r.out()).doesNotContain("other");

            ToolRun all = run("--bootstrap-server", broker, "--describe");
            assertThat(all.exit()).as(all.err()).isZero();
            assertThat(all.out()).contains("other").contains("sized");

            long startNs = System.nanoTime();
            assertOneLine(
                    run("--bootstrap-server", broker, "--describe", "--topic-list", "nosuch"),
                    1,
                    "error: topic nosuch does not exist");
            assertOneLine(
                    run("--bootstrap-server", broker, "--describe", "--broker-list", "42"),
                    1,
                    "error: broker 42 is not in the cluster");
            assertOneLine(run("--bootstrap-server", broker), 2, "error: Missing required option: '--describe'");
            assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
        }
    }

    private static Path partitionLog(String name, Path a, Path b) {
        Path inA = a.resolve(name).resolve("00000000000000000000.log");
        return Files.exists(inA) ? inA : b.resolve(name).resolve("00000000000000000000.log");
    }

    private static void assertOneLine(ToolRun r, int exit, String start) {
        assertThat(r.exit()).as(r.err()).isEqualTo(exit);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).startsWith(start);
        assertThat(r.err().strip().lines()).hasSize(exit == OneLineUsageErrors.USAGE_EXIT ? 2 : 1);
    }
}
