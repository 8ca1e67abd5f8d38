package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.append.AppendService;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowProducer;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.lang.ref.WeakReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A partition leaves nothing behind (issue #18, point 5): on a combined node (what users run),
 * 1,000 partitions are created, each gets an append queue by a Produce, and all are deleted.
 * Afterwards the append service holds no queue and its agents poll none, the replica manager hosts
 * nothing, and no {@link Partition} or {@link UnifiedLog} of them is reachable at all (weak
 * references cleared by the GC). One transport: nothing here depends on it.
 */
@IntegrationTest
class PartitionRemovalTest {
    private static final int TOPICS = 10;
    private static final int PARTITIONS_PER_TOPIC = 100;

    @TempDir
    Path dir;

    private StellflowServer start() throws Exception {
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("cluster.id", "removal-test");
        p.setProperty("transport", "nio");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("num.append.agents", "2");
        // 1,000 logs: small index files (the default maps 10 MiB twice per log).
        p.setProperty("log.index.size.max.bytes", "4096");
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    private static Properties client(StellflowServer s) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + s.port());
        return p;
    }

    @Test
    void aThousandPartitionsCreatedProducedToAndDeletedLeaveNoQueueNoPartitionAndNoLogReachable() throws Exception {
        List<WeakReference<Partition>> partitions = new ArrayList<>();
        List<WeakReference<UnifiedLog>> logs = new ArrayList<>();
        try (StellflowServer server = start()) {
            ReplicaManager replicas = server.replicaManager();
            AppendService appends = server.appendService();
            try (StellflowAdmin admin = new StellflowAdmin(client(server))) {
                for (int t = 0; t < TOPICS; t++) {
                    admin.createTopic(topic(t), PARTITIONS_PER_TOPIC);
                }
                await(() -> ledPartitions(replicas) == TOPICS * PARTITIONS_PER_TOPIC, "all partitions led here");
                collectReferences(replicas, partitions, logs);
                try (StellflowProducer producer = new StellflowProducer(client(server))) {
                    List<Future<RecordMetadata>> sent = new ArrayList<>();
                    for (int t = 0; t < TOPICS; t++) {
                        for (int p = 0; p < PARTITIONS_PER_TOPIC; p++) {
                            sent.add(producer.send(
                                    new ProducerRecord(topic(t), p, null, "v".getBytes(StandardCharsets.UTF_8))));
                        }
                    }
                    for (Future<RecordMetadata> f : sent) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                }
                assertThat(appends.appenderCount())
                        .as("one queue per produced partition")
                        .isEqualTo(1_000);
                await(() -> appends.polledQueueCount() == 1_000, "the agents poll every queue");

                for (int t = 0; t < TOPICS; t++) {
                    admin.deleteTopic(topic(t));
                }
            }
            await(() -> ledPartitions(replicas) == 0, "no partition hosted");
            assertThat(appends.appenderCount()).as("queues left in the service").isZero();
            await(() -> appends.polledQueueCount() == 0, "the agents poll no queue");
            for (int t = 0; t < TOPICS; t++) {
                assertThat(replicas.hostsTopic(topic(t))).isFalse();
            }
            assertUnreachable(partitions, "Partition");
            assertUnreachable(logs, "UnifiedLog");
        }
    }

    private static String topic(int t) {
        return "removal-" + t;
    }

    private static int ledPartitions(ReplicaManager replicas) {
        int[] n = {0};
        replicas.forEachHostedPartition(p -> {
            if (p.isLeader()) {
                n[0]++;
            }
        });
        return n[0];
    }

    /** In a method of its own so that no local of the test keeps a strong reference. */
    private static void collectReferences(
            ReplicaManager replicas, List<WeakReference<Partition>> partitions, List<WeakReference<UnifiedLog>> logs) {
        replicas.forEachHostedPartition(p -> {
            partitions.add(new WeakReference<>(p));
            logs.add(new WeakReference<>(p.log()));
        });
        assertThat(partitions).hasSize(TOPICS * PARTITIONS_PER_TOPIC);
    }

    /** Every referent is collected within 30 s of asking the GC (one that stays is named). */
    private static <T> void assertUnreachable(List<WeakReference<T>> refs, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String alive;
        while ((alive = firstAlive(refs)) != null) {
            assertThat(System.nanoTime())
                    .as("%s still reachable after deletion: %s", what, alive)
                    .isLessThan(deadline);
            System.gc();
            Thread.sleep(100);
        }
    }

    private static <T> String firstAlive(List<WeakReference<T>> refs) {
        for (WeakReference<T> r : refs) {
            T referent = r.get();
            if (referent != null) {
                return referent.toString();
            }
        }
        return null;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        Wait.until(Duration.ofSeconds(60), condition, what);
    }
}
