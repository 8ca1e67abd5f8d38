package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.image.ApplyResult;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code stellflow.partition.offline.count} ({@link ReplicaGauges#offlinePartitions}): the lowest-id
 * unfenced broker reports every leaderless partition of the cluster, the others 0, so the sum over
 * brokers counts each offline partition once, also one whose replicas are all down.
 */
class OfflinePartitionsGaugeTest {
    private static final UUID TOPIC = new UUID(3, 3);

    /** Brokers 1..3 ({@code fenced[i-1]}), topic "t" with one partition per leader in {@code leaders}. */
    private static MetadataImage image(boolean[] fenced, int... leaders) {
        List<MetadataRecord> records = new ArrayList<>();
        for (int id = 1; id <= fenced.length; id++) {
            records.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                    .setBrokerId(id)
                    .setIncarnationId(MetadataRecords.uuid(new UUID(1, id)))
                    .setBrokerEpoch(10 + id)
                    .setFenced(fenced[id - 1])
                    .build()));
        }
        records.add(MetadataRecords.of(TopicRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setName("t")
                .build()));
        for (int p = 0; p < leaders.length; p++) {
            PartitionRecord.Builder b = PartitionRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(TOPIC))
                    .setPartition(p)
                    .setLeader(leaders[p])
                    .setLeaderEpoch(1)
                    .setPartitionEpoch(1);
            // p0 lives on brokers 2 and 3 only, every other partition on all three.
            b.addAllReplicas(p == 0 ? List.of(2, 3) : List.of(1, 2, 3));
            b.addAllIsr(leaders[p] < 0 ? List.of(p == 0 ? 2 : 1) : List.of(leaders[p]));
            records.add(MetadataRecords.of(b.build()));
        }
        ApplyResult r = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, records);
        assertThat(r.ok()).as(r.message()).isTrue();
        return r.image();
    }

    private static long sumOverBrokers(MetadataImage img) {
        long sum = 0;
        for (int id = 1; id <= 3; id++) {
            sum += ReplicaGauges.offlinePartitions(img, id);
        }
        return sum;
    }

    @Test
    void theLowestLiveBrokerReportsEveryLeaderlessPartitionOnceIncludingOneHostedOnlyOnDownBrokers() {
        // Brokers 2 and 3 are down: p0 (replicas 2, 3 only) and p1 have no leader; p2 is led by 1.
        MetadataImage img = image(new boolean[] {false, true, true}, -1, -1, 1);
        assertThat(img.leaderlessPartitionCount()).isEqualTo(2);
        assertThat(ReplicaGauges.offlinePartitions(img, 1)).isEqualTo(2);
        assertThat(ReplicaGauges.offlinePartitions(img, 2)).isZero();
        assertThat(ReplicaGauges.offlinePartitions(img, 3)).isZero();
        assertThat(sumOverBrokers(img)).isEqualTo(2);
    }

    @Test
    void aFencedLowIdBrokerLeavesTheReportToTheNextLiveOne() {
        MetadataImage img = image(new boolean[] {true, false, false}, -1, 2, 3);
        assertThat(ReplicaGauges.offlinePartitions(img, 1)).isZero();
        assertThat(ReplicaGauges.offlinePartitions(img, 2)).isEqualTo(1);
        assertThat(sumOverBrokers(img)).isEqualTo(1);
    }

    @Test
    void nothingOfflineReportsZeroAndAnImageWithoutLiveBrokersHasNoReporter() {
        assertThat(sumOverBrokers(image(new boolean[] {false, false, false}, 2, 1, 3)))
                .isZero();
        MetadataImage allDown = image(new boolean[] {true, true, true}, -1, -1, -1);
        assertThat(allDown.leaderlessPartitionCount()).isEqualTo(3);
        assertThat(sumOverBrokers(allDown)).as("no unfenced broker to report").isZero();
    }
}
