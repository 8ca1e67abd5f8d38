package io.stellflow.controller;

import static io.stellflow.controller.ControllerQuorumTest.create;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.VoterState;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three controllers as separate JVM processes ({@link ControllerMain}, a bare controller launcher of
 * this module's tests); the Ratis leader is killed with SIGKILL.
 */
@IntegrationTest
class ControllerKillTest {
    /** Generous: this runs on a 2-core machine shared with other builds (target: under 5 s quiet). */
    private static final long FAILOVER_BOUND_MS = 15_000;

    @TempDir
    Path dir;

    /** One controller child process, its config file and its output file. */
    private static final class ControllerProcess {
        final int id;
        final Path config;
        final Path log;
        Process process;

        ControllerProcess(int id, Path config, Path log) {
            this.id = id;
            this.config = config;
            this.log = log;
        }

        void start() throws IOException {
            String java = ProcessHandle.current()
                    .info()
                    .command()
                    .orElse(Path.of(System.getProperty("java.home"), "bin", "java")
                            .toString());
            List<String> cmd = new ArrayList<>(List.of(
                    java,
                    "-Xms64m",
                    "-Xmx256m",
                    "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1",
                    "-cp",
                    System.getProperty("java.class.path"),
                    ControllerMain.class.getName(),
                    config.toString()));
            process = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
        }

        void kill9() throws InterruptedException {
            process.destroyForcibly(); // SIGKILL on Linux: no shutdown hook, no Ratis close
            assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }

        Properties properties() throws IOException {
            Properties p = new Properties();
            try (InputStream in = Files.newInputStream(config)) {
                p.load(in);
            }
            return p;
        }
    }

    private static String ts() {
        return java.time.LocalTime.now().toString();
    }

    @Test
    void kill9OfTheLeaderControllerProcessFailsOverAndTheRestartedOneCatchesUp() throws Exception {
        int[] raft = LoopbackPorts.pick(3);
        int[] rpc = LoopbackPorts.pick(3);
        StringBuilder voters = new StringBuilder();
        StringBuilder bootstrap = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            voters.append(i == 0 ? "" : ",").append(i + 1).append("@127.0.0.1:").append(raft[i]);
            bootstrap.append(i == 0 ? "" : ",").append("127.0.0.1:").append(rpc[i]);
        }
        List<ControllerProcess> procs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int id = i + 1;
            Path config = dir.resolve("controller-" + id + ".properties");
            String text = "node.id=" + id + "\n"
                    + "controller.quorum.voters=" + voters + "\n"
                    + "controller.listener=127.0.0.1:" + rpc[i] + "\n"
                    + "metadata.log.dir=" + dir.resolve("metadata-" + id) + "\n"
                    // the test's fake broker heartbeats only while registering
                    + "broker.session.timeout.ms=600000\n";
            Files.writeString(config, text, StandardCharsets.UTF_8);
            procs.add(new ControllerProcess(id, config, dir.resolve("controller-" + id + ".log")));
        }
        ControllerServer restarted = null;
        try (ControllerClient client = ControllerClient.builder(bootstrap.toString())
                .requestTimeout(Duration.ofSeconds(120))
                .build()) {
            long startNs = System.nanoTime();
            for (ControllerProcess p : procs) {
                p.start();
            }
            // Three cold JVMs on a loaded machine: the first answer can take a while.
            assertThat(client.describeQuorum().getError()).isEqualTo(ErrorCode.NONE);
            System.out.println(ts() + " quorum of 3 controller processes answered after "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) + " ms");
            new FakeBroker(1, "").registerAndUnfence(client);
            System.out.println(ts() + " broker 1 registered and unfenced");
            assertThat(client.createTopics(create("before", 3, 1)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.NONE);
            DescribeQuorumResponse q0 = client.describeQuorum();
            assertThat(q0.getError()).isEqualTo(ErrorCode.NONE);
            ControllerProcess leader = procs.get(q0.getLeaderId() - 1);
            assertThat(leader.id).isEqualTo(q0.getLeaderId());

            System.out.println(ts() + " killing leader c" + leader.id);
            long killNs = System.nanoTime();
            leader.kill9();
            CreateTopicsResponse r = client.createTopics(create("after", 3, 1));
            long failoverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killNs);
            System.out.println("CONTROLLER_FAILOVER_MS " + failoverMs + " (SIGKILL of leader process c" + leader.id
                    + " -> first successful CreateTopics; exit " + leader.process.exitValue() + ")");
            assertThat(leader.process.exitValue()).as("killed by SIGKILL").isEqualTo(137);
            assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
            assertThat(failoverMs).isLessThan(FAILOVER_BOUND_MS);

            DescribeQuorumResponse q1 = client.describeQuorum();
            assertThat(q1.getLeaderId()).isNotEqualTo(leader.id).isPositive();
            assertThat(q1.getTerm()).isGreaterThan(q0.getTerm());

            // The image the quorum committed, as a broker sees it through FollowMetadata.
            MetadataImage quorumImage;
            try (MetadataFollower follower = client.followMetadata(0, new MetadataListener() {
                @Override
                public void onImage(MetadataImage image) {}

                @Override
                public void onDelta(MetadataDelta delta, MetadataImage image) {}
            })) {
                // Raft's committed index also counts entries that are not metadata (a new leader's
                // configuration entry), so wait for the topic created after the failover.
                TestCluster.awaitTrue(
                        () -> follower.image().topic("after") != null,
                        Duration.ofSeconds(60),
                        "the follower has topic 'after' (at offset " + follower.offset() + ", quorum committed "
                                + q1.getCommittedIndex() + ")");
                quorumImage = follower.image();
                System.out.println(ts() + " follower at offset " + quorumImage.offset() + ", quorum committed "
                        + q1.getCommittedIndex());
            }
            assertThat(quorumImage.topicsByName()).containsKeys("before", "after");

            // Restart the killed controller from its SIGKILLed storage (in this JVM, to read its image):
            // it must catch up on the entries it missed and hold the same topics, ids and epochs.
            restarted = ControllerServer.start(ControllerConfig.fromProperties(leader.properties()));
            ControllerServer r1 = restarted;
            long target = quorumImage.offset();
            TestCluster.awaitTrue(
                    () -> r1.image().offset() >= target,
                    Duration.ofSeconds(30),
                    "restarted controller " + leader.id + " applied " + target);
            System.out.println(ts() + " restarted c" + leader.id + " caught up to " + target);
            MetadataImage caughtUp = restarted.image();
            for (String name : List.of("before", "after")) {
                assertThat(caughtUp.topic(name).id())
                        .isEqualTo(quorumImage.topic(name).id());
            }
            assertThat(caughtUp.topicsByName()).isEqualTo(quorumImage.topicsByName());
            assertThat(caughtUp.brokers()).isEqualTo(quorumImage.brokers());

            // The quorum reports the restarted voter as caught up.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                DescribeQuorumResponse q2 = client.describeQuorum();
                VoterState v = q2.getVotersList().stream()
                        .filter(s -> s.getId() == leader.id)
                        .findFirst()
                        .orElseThrow();
                if (v.getMatchIndex() >= target && v.getLag() == 0) {
                    break;
                }
                assertThat(System.nanoTime())
                        .as("voter %d caught up: %s", leader.id, q2)
                        .isLessThan(deadline);
                Thread.sleep(100);
            }
        } catch (AssertionError | RuntimeException e) {
            for (ControllerProcess p : procs) {
                if (Files.exists(p.log)) {
                    System.out.println("---- controller " + p.id + " output ----");
                    // the controller's own events and warnings, without stack traces
                    List<String> lines = Files.readAllLines(p.log).stream()
                            .filter(l -> !l.isBlank() && !Character.isWhitespace(l.charAt(0)))
                            .filter(l -> !l.startsWith("WARNING:") && !l.startsWith("Caused by"))
                            .toList();
                    lines.subList(Math.max(0, lines.size() - 60), lines.size()).forEach(System.out::println);
                }
            }
            throw e;
        } finally {
            if (restarted != null) {
                restarted.close();
            }
            for (ControllerProcess p : procs) {
                if (p.process != null && p.process.isAlive()) {
                    p.process.destroyForcibly();
                    p.process.waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
    }
}
