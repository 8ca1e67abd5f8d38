package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker's new incarnation registers while the leader keeps changing the ISR of a partition the
 * broker is in. The registration's entry also takes the broker out of that ISR, built from the image
 * it read; an ISR change committed in between made the whole entry stale, and the broker, refused
 * with INVALID_UPDATE_VERSION, did not start (seen in the replication fault checker in CI). The
 * controller now builds the entry again from the newer image.
 */
@IntegrationTest
class RegistrationRaceTest {
    private static final int REGISTRATIONS = 40;

    @TempDir
    Path dir;

    @Test
    void aNewIncarnationRegistersWhileTheIsrOfItsPartitionKeepsChanging() throws Exception {
        try (LeaderElectionTest.Setup s = new LeaderElectionTest.Setup(dir, 3, LeaderElectionTest.props())) {
            s.createTopic("t", 1, 3, Map.of());
            PartitionImage p = s.partition("t", 0);
            int leader = p.leader();
            int restarted =
                    p.replicas().stream().filter(id -> id != leader).findFirst().orElseThrow();
            int other = p.replicas().stream()
                    .filter(id -> id != leader && id != restarted)
                    .findFirst()
                    .orElseThrow();

            // The leader toggles the third broker in and out of the ISR as fast as the controller
            // commits, and puts the restarted broker back whenever it is unfenced again.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger altered = new AtomicInteger();
            Thread alterer = Thread.ofPlatform().name("isr-alterer").start(() -> {
                boolean full = false;
                while (!stop.get()) {
                    List<Integer> isr = full ? List.of(leader, restarted, other) : List.of(leader, restarted);
                    if (s.alterIsr("t", 0, isr).getError() == ErrorCode.NONE) {
                        altered.incrementAndGet();
                    }
                    full = !full;
                }
            });
            try {
                // At least REGISTRATIONS registrations, and on until more ISR changes than that were
                // committed among them (a busy machine can starve the alterer thread for a while).
                for (int i = 0; i < 10 * REGISTRATIONS && (i < REGISTRATIONS || altered.get() <= REGISTRATIONS); i++) {
                    new FakeBroker(restarted, "").registerAndUnfence(s.client); // throws when refused
                }
            } finally {
                stop.set(true);
                alterer.join();
            }
            assertThat(altered.get())
                    .as("ISR changes committed during the registrations")
                    .isGreaterThan(REGISTRATIONS);
            assertThat(s.partition("t", 0).leader()).isEqualTo(leader);
        }
    }
}
