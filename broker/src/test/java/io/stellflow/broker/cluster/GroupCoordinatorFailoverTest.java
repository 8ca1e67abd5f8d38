package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.coordinator.GroupPartitioner;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.client.HostPort;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchRequest.OffsetFetchTopic;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the group coordinator's broker during a stream of OffsetCommits (issue #19, Tests):
 * three broker processes and one controller on 127.0.0.1, {@code __consumer_offsets} with RF 3 and
 * min.insync.replicas 2. A committer sends increasing offsets to the coordinator, finding it again
 * with FindCoordinator (bounded back-off) after NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a
 * lost connection; the coordinator's process is killed meanwhile. Checked: every acknowledged commit
 * is read back from the new coordinator, and the committed offset read never goes backwards.
 */
@IntegrationTest
class GroupCoordinatorFailoverTest {
    private static final String GROUP = "failover-group";
    private static final String TOPIC = "orders";
    private static final int OFFSETS_PARTITIONS = 3;

    @TempDir
    Path dir;

    private ClusterHarness harness;

    private FindCoordinatorResponse findCoordinator(int broker) {
        try {
            return harness.network
                    .send(
                            harness.broker(broker),
                            ApiKeys.FIND_COORDINATOR,
                            FindCoordinatorRequest.forGroup(GROUP)::write,
                            FindCoordinatorResponse::read)
                    .get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            return FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE); // broker down
        }
    }

    /** The coordinator as some live broker names it, asking with back-off for up to 30 s; -1 if none. */
    private int coordinator() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long backoffMs = 50;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < harness.brokers.length; i++) {
                if (harness.brokers[i] != null) {
                    FindCoordinatorResponse r = findCoordinator(i);
                    if (r.errorCode() == Errors.NONE) {
                        return r.nodeId();
                    }
                }
            }
            Thread.sleep(backoffMs);
            backoffMs = Math.min(backoffMs * 2, 1000);
        }
        return -1;
    }

    /** One commit of {@code offset} to broker id {@code coordinator}: its error code (or 16 on a lost connection). */
    private short commit(int coordinator, long offset) {
        OffsetCommitRequest req = new OffsetCommitRequest(
                GROUP,
                null,
                OffsetCommitRequest.NO_MEMBER_EPOCH,
                List.of(new OffsetCommitTopic(TOPIC, List.of(new OffsetCommitPartition(0, offset, "o" + offset)))));
        try {
            OffsetCommitResponse r = harness.network
                    .send(
                            harness.broker(ClusterHarness.brokerIndexOf(coordinator)),
                            ApiKeys.OFFSET_COMMIT,
                            req::write,
                            OffsetCommitResponse::read)
                    .get(10, TimeUnit.SECONDS);
            return r.topics().get(0).partitions().get(0).errorCode();
        } catch (Exception e) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
    }

    private long fetch(int coordinator) throws Exception {
        OffsetFetchRequest req = new OffsetFetchRequest(GROUP, List.of(new OffsetFetchTopic(TOPIC, List.of(0))));
        HostPort at = harness.broker(ClusterHarness.brokerIndexOf(coordinator));
        OffsetFetchResponse r = harness.network
                .send(at, ApiKeys.OFFSET_FETCH, req::write, OffsetFetchResponse::read)
                .get(10, TimeUnit.SECONDS);
        OffsetFetchResponse.OffsetFetchPartitionResponse p =
                r.topics().get(0).partitions().get(0);
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        return p.offset();
    }

    @Test
    void everyAcknowledgedCommitSurvivesAKillOfTheCoordinator() throws Exception {
        harness = new ClusterHarness(dir, 1, 3);
        try {
            harness.brokerOverrides.setProperty("offsets.topic.num.partitions", Integer.toString(OFFSETS_PARTITIONS));
            harness.brokerOverrides.setProperty("min.insync.replicas", "2");
            harness.startControllers();
            harness.startBrokers();
            harness.awaitBrokersUnfenced(60_000);
            try (ControllerClient controller =
                    ControllerClient.builder(harness.bootstrapControllers).build()) {
                assertThat(controller
                                .createTopics(CreateTopicsRequest.newBuilder()
                                        .addTopics(CreatableTopic.newBuilder()
                                                .setName(TOPIC)
                                                .setNumPartitions(1)
                                                .setReplicationFactor(3))
                                        .build())
                                .getTopics(0)
                                .getError())
                        .isEqualTo(ErrorCode.NONE);
            }
            int first = coordinator();
            assertThat(first).as("a coordinator is found").isPositive();
            int partition = GroupPartitioner.partitionFor(GROUP, OFFSETS_PARTITIONS);
            ClusterHarness.await(30_000, "the group's partition is fully in sync", () -> {
                PartitionImage p =
                        harness.controllerImage().topic(OffsetsTopic.NAME).partition(partition);
                return p.isr().size() == 3;
            });

            long lastAcked = 0;
            long highestRead = 0;
            int current = first;
            boolean killed = false;
            int retries = 0;
            long backoffMs = 50;
            for (long offset = 1; offset <= 400 && retries < 200; offset++) {
                if (!killed && lastAcked >= 100) {
                    harness.killBroker(ClusterHarness.brokerIndexOf(first));
                    killed = true;
                }
                short code = commit(current, offset);
                if (code == Errors.NONE) {
                    lastAcked = offset;
                    backoffMs = 50;
                    if (offset % 50 == 0) {
                        long read = fetch(current);
                        assertThat(read).as("read after ack of %d", offset).isGreaterThanOrEqualTo(lastAcked);
                        assertThat(read).as("never backwards").isGreaterThanOrEqualTo(highestRead);
                        highestRead = read;
                    }
                } else {
                    assertThat(code).isIn(Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE);
                    retries++;
                    Thread.sleep(backoffMs); // a client's bounded back-off before it looks again
                    backoffMs = Math.min(backoffMs * 2, 1000);
                    int found = coordinator();
                    assertThat(found)
                            .as("a coordinator after %d retries", retries)
                            .isPositive();
                    current = found;
                    offset--; // retry the same offset at the coordinator found
                }
            }
            assertThat(killed).isTrue();
            assertThat(current).as("the coordinator moved").isNotEqualTo(first);
            assertThat(lastAcked).as("commits went on after the kill").isGreaterThan(100);
            long read = fetch(current);
            assertThat(read).as("every acknowledged commit is read back").isEqualTo(lastAcked);
            assertThat(read).isGreaterThanOrEqualTo(highestRead);
            System.out.println("first coordinator " + first + " killed; new coordinator " + current + ", " + lastAcked
                    + " commits acknowledged, " + retries + " retried");
        } finally {
            harness.close();
        }
    }
}
