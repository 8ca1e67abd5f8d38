package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Producer id blocks on three in-process controllers, across a failover of the active one. */
@IntegrationTest
class ProducerIdFailoverTest {
    @TempDir
    Path dir;

    private static AllocateProducerIdsResponse allocate(ControllerClient c, FakeBroker b) {
        return c.allocateProducerIds(AllocateProducerIdsRequest.newBuilder()
                .setBrokerId(b.id)
                .setBrokerEpoch(b.epoch)
                .build());
    }

    @Test
    void blocksNeverOverlapAndTheNextActiveControllerContinuesAfterTheHighestBlock() throws Exception {
        Properties p = new Properties();
        p.setProperty("broker.session.timeout.ms", "60000");
        try (TestCluster cluster = new TestCluster(dir, 3, p).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            int old = cluster.awaitActive(Duration.ofSeconds(20));
            FakeBroker b1 = new FakeBroker(1, "");
            FakeBroker b2 = new FakeBroker(2, "");
            b1.registerAndUnfence(client);
            b2.registerAndUnfence(client);

            AllocateProducerIdsResponse first = allocate(client, b1);
            AllocateProducerIdsResponse second = allocate(client, b2);
            assertThat(first.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(second.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(first.getFirstProducerId()).isEqualTo(0);
            assertThat(first.getBlockSize()).isEqualTo(1000);
            assertThat(second.getFirstProducerId()).isEqualTo(1000);

            cluster.stop(old);
            AllocateProducerIdsResponse afterFailover = allocate(client, b1);
            assertThat(afterFailover.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(cluster.activeIndex()).isNotEqualTo(old).isGreaterThanOrEqualTo(0);
            assertThat(afterFailover.getFirstProducerId()).isEqualTo(2000);

            // A broker whose epoch is not current gets no block and moves nothing.
            FakeBroker stale = new FakeBroker(1, "");
            stale.epoch = b1.epoch + 999;
            AllocateProducerIdsResponse refused = allocate(client, stale);
            assertThat(refused.getError()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH);
            assertThat(refused.getErrorMessage()).contains("broker 1");
            assertThat(allocate(client, b2).getFirstProducerId()).isEqualTo(3000);
        }
    }
}
