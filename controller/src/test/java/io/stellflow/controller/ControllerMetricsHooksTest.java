package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller calls each {@link ControllerMetrics} hook where the event happens: one controller,
 * two test-driven brokers, topic commands good and bad, a FollowMetadata stream, a broker whose
 * session expires, a clean-shutdown fence and a restart from a snapshot.
 */
@IntegrationTest
class ControllerMetricsHooksTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    /** Counts every hook call; thread-safe like the real implementation. */
    static final class Recording implements ControllerMetrics {
        final AtomicLong active = new AtomicLong(-1);
        final AtomicLong elections = new AtomicLong();
        final AtomicLong epoch = new AtomicLong(-1);
        final AtomicLongArray commands = new AtomicLongArray(CommandResult.values().length);
        final AtomicLong appends = new AtomicLong();
        final AtomicLong replays = new AtomicLong();
        final AtomicLong deltas = new AtomicLong();
        final AtomicLong registered = new AtomicLong(-1);
        final AtomicLong fenced = new AtomicLong(-1);
        final AtomicLong heartbeatTimeouts = new AtomicLong();
        final AtomicLong partitionChanges = new AtomicLong();
        final AtomicLong uncleanElections = new AtomicLong();
        final AtomicLong negativeLatencies = new AtomicLong();

        private void latency(long ns) {
            if (ns < 0) {
                negativeLatencies.incrementAndGet();
            }
        }

        @Override
        public void active(boolean isActive) {
            active.set(isActive ? 1 : 0);
        }

        @Override
        public void electionWon() {
            elections.incrementAndGet();
        }

        @Override
        public void epoch(long term) {
            epoch.set(term);
        }

        @Override
        public void command(CommandResult result, long latencyNs) {
            latency(latencyNs);
            commands.incrementAndGet(result.ordinal());
        }

        @Override
        public void logAppend(long latencyNs) {
            latency(latencyNs);
            appends.incrementAndGet();
        }

        @Override
        public void replay(long latencyNs) {
            latency(latencyNs);
            replays.incrementAndGet();
        }

        @Override
        public void deltaBroadcast() {
            deltas.incrementAndGet();
        }

        @Override
        public void brokers(int registeredCount, int fencedCount) {
            registered.set(registeredCount);
            fenced.set(fencedCount);
        }

        @Override
        public void heartbeatTimeout() {
            heartbeatTimeouts.incrementAndGet();
        }

        @Override
        public void partitionChanges(int count) {
            partitionChanges.addAndGet(count);
        }

        @Override
        public void uncleanElection() {
            uncleanElections.incrementAndGet();
        }

        long commands(CommandResult r) {
            return commands.get(r.ordinal());
        }
    }

    @Test
    void everyHookFiresAtItsEvent() throws Exception {
        Properties p = new Properties();
        p.setProperty("broker.session.timeout.ms", "1500");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("metadata.snapshot.interval.entries", "3");
        Recording m = new Recording();
        Set<FakeBroker> alive = ConcurrentHashMap.newKeySet();
        try (TestCluster one = new TestCluster(dir, 1, p)) {
            one.servers[0] = ControllerServer.start(one.configs.get(0), m);
            one.awaitActive(WAIT);
            TestCluster.awaitTrue(() -> m.active.get() == 1, WAIT, "active = 1");
            assertThat(m.elections.get()).as("the only voter won one election").isEqualTo(1);
            assertThat(m.epoch.get()).isPositive();
            assertThat(m.registered.get()).as("no broker record applied yet").isEqualTo(-1);
            TestCluster.awaitTrue(() -> m.appends.get() >= 1, WAIT, "the controller's own announcement");

            try (ControllerClient c = one.client(WAIT)) {
                Thread heartbeats = Thread.ofVirtual().start(() -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        try {
                            for (FakeBroker b : alive) {
                                b.heartbeat(c, Long.MAX_VALUE);
                            }
                            Thread.sleep(100);
                        } catch (InterruptedException e) {
                            return;
                        } catch (RuntimeException e) {
                            if (Thread.currentThread().isInterrupted()) {
                                return; // the call was cut short by the test's end
                            }
                            throw e;
                        }
                    }
                });
                try {
                    FakeBroker b1 = new FakeBroker(1, "");
                    FakeBroker b2 = new FakeBroker(2, "");
                    b1.registerAndUnfence(c);
                    alive.add(b1);
                    b2.registerAndUnfence(c);
                    alive.add(b2);
                    assertThat(m.registered.get()).isEqualTo(2);
                    assertThat(m.fenced.get()).isZero();
                    // 2 registrations + 2 unfencing heartbeats; plain heartbeats are not commands.
                    assertThat(m.commands(CommandResult.SUCCESS)).isEqualTo(4);
                    Thread.sleep(400);
                    assertThat(m.commands(CommandResult.SUCCESS)).isEqualTo(4);
                    assertThat(m.commands(CommandResult.ERROR)).isZero();

                    long appendsBefore = m.appends.get();
                    CreateTopicsResponse ok = c.createTopics(CreateTopicsRequest.newBuilder()
                            .addTopics(CreatableTopic.newBuilder()
                                    .setName("metered")
                                    .setNumPartitions(2)
                                    .setReplicationFactor(2))
                            .build());
                    assertThat(ok.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
                    assertThat(m.commands(CommandResult.SUCCESS)).isEqualTo(5);
                    assertThat(m.appends.get()).isEqualTo(appendsBefore + 1);
                    CreateTopicsResponse bad = c.createTopics(CreateTopicsRequest.newBuilder()
                            .addTopics(CreatableTopic.newBuilder()
                                    .setName("bad/name")
                                    .setNumPartitions(1)
                                    .setReplicationFactor(1))
                            .build());
                    assertThat(bad.getTopics(0).getError()).isEqualTo(ErrorCode.INVALID_TOPIC_EXCEPTION);
                    assertThat(m.commands(CommandResult.ERROR)).isEqualTo(1);
                    assertThat(m.appends.get())
                            .as("nothing written for bad input")
                            .isEqualTo(appendsBefore + 1);
                    assertThat(m.partitionChanges.get())
                            .as("new partitions are not changes")
                            .isZero();

                    // FollowMetadata from offset 0: the full image, then each delta, one count each.
                    AtomicLong received = new AtomicLong();
                    MetadataFollower follower = c.followMetadata(0, new MetadataListener() {
                        @Override
                        public void onImage(MetadataImage image) {
                            received.incrementAndGet();
                        }

                        @Override
                        public void onDelta(MetadataDelta delta, MetadataImage image) {
                            received.incrementAndGet();
                        }
                    });
                    try {
                        TestCluster.awaitTrue(() -> received.get() >= 1, WAIT, "the image");
                        TestCluster.awaitTrue(() -> m.deltas.get() >= received.get(), WAIT, "every event sent counted");
                    } finally {
                        follower.close();
                    }

                    // Broker 2 goes silent: its session expires, it is fenced and leaves both ISRs.
                    alive.remove(b2);
                    TestCluster.awaitTrue(() -> m.heartbeatTimeouts.get() == 1, WAIT, "a heartbeat timeout");
                    TestCluster.awaitTrue(() -> m.fenced.get() == 1, WAIT, "fenced = 1");
                    assertThat(m.registered.get()).isEqualTo(2);
                    assertThat(m.partitionChanges.get())
                            .as("both partitions (replicas 1 and 2) lose broker 2")
                            .isEqualTo(2);

                    // Broker 1 stops cleanly: a want-fence heartbeat is a command.
                    heartbeats.interrupt();
                    heartbeats.join();
                    long before = m.commands(CommandResult.SUCCESS);
                    c.brokerHeartbeat(BrokerHeartbeatRequest.newBuilder()
                            .setBrokerId(b1.id)
                            .setBrokerEpoch(b1.epoch)
                            .setWantFence(true)
                            .build());
                    assertThat(m.commands(CommandResult.SUCCESS)).isEqualTo(before + 1);
                    assertThat(m.fenced.get()).isEqualTo(2);
                    assertThat(m.heartbeatTimeouts.get())
                            .as("a clean stop is no timeout")
                            .isEqualTo(1);
                } finally {
                    heartbeats.interrupt();
                    heartbeats.join();
                }
            }
            assertThat(m.uncleanElections.get()).isZero();
            assertThat(m.negativeLatencies.get()).isZero();
            assertThat(m.replays.get()).as("no snapshot existed at start").isZero();

            TestCluster.awaitTrue(() -> hasSnapshot(dir), WAIT, "a snapshot");
            one.stop(0);
            assertThat(m.active.get()).as("stopped").isZero();

            Recording restarted = new Recording();
            one.servers[0] = ControllerServer.start(one.configs.get(0), restarted);
            one.awaitActive(WAIT);
            assertThat(restarted.replays.get()).as("the snapshot was loaded").isGreaterThanOrEqualTo(1);
            assertThat(restarted.registered.get()).isEqualTo(2);
            assertThat(restarted.fenced.get()).isEqualTo(2);
            assertThat(restarted.epoch.get()).isGreaterThan(m.epoch.get());
        }
    }

    private static boolean hasSnapshot(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.anyMatch(f -> f.getFileName().toString().startsWith("snapshot."));
        } catch (IOException | UncheckedIOException e) {
            return false; // a file vanished while walking (Ratis purges old snapshots)
        }
    }
}
