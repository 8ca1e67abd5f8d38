package io.stellflow.controller.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.proto.ActiveControllerRecord;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionChangeRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.ProducerIdsRecord;
import io.stellflow.controller.proto.RecordType;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicRecord;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class MetadataApplierTest {
    private static final UUID TOPIC = new UUID(1, 2);

    static MetadataRecord broker(int id) {
        return MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                .setBrokerId(id)
                .setIncarnationId(MetadataRecords.uuid(new UUID(9, id)))
                .setFenced(true)
                .build());
    }

    static List<MetadataRecord> topicWithPartitions(UUID id, String name, int partitions) {
        var list = new java.util.ArrayList<MetadataRecord>();
        list.add(MetadataRecords.of(TopicRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(id))
                .setName(name)
                .build()));
        for (int p = 0; p < partitions; p++) {
            list.add(MetadataRecords.of(PartitionRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(id))
                    .setPartition(p)
                    .addAllReplicas(List.of(1, 2))
                    .setLeader(1)
                    .addAllIsr(List.of(1, 2))
                    .build()));
        }
        return list;
    }

    @Test
    void registrationTakesTheEntryIndexAsBrokerEpochAndStartsFenced() {
        ApplyResult r = MetadataApplier.apply(MetadataImage.EMPTY, 1, 7, List.of(broker(3)));
        assertThat(r.ok()).isTrue();
        assertThat(r.image().broker(3).brokerEpoch()).isEqualTo(7);
        assertThat(r.image().broker(3).fenced()).isTrue();
        assertThat(r.image().offset()).isEqualTo(7);
        assertThat(r.image().term()).isEqualTo(1);
    }

    @Test
    void topicAndPartitionsApplyAtomicallyAndABadRecordRejectsTheWholeEntry() {
        var good = topicWithPartitions(TOPIC, "orders", 3);
        MetadataImage img =
                MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, good).image();
        assertThat(img.topic("orders").partitions()).hasSize(3);
        assertThat(img.topic(TOPIC).name()).isEqualTo("orders");

        var bad = new java.util.ArrayList<>(topicWithPartitions(new UUID(5, 5), "payments", 2));
        bad.add(MetadataRecords.of(PartitionRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(new UUID(5, 5)))
                .setPartition(2)
                .addReplicas(1)
                .setLeader(2) // not in ISR
                .addIsr(1)
                .build()));
        ApplyResult r = MetadataApplier.apply(img, 1, 2, bad);
        assertThat(r.error()).isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(r.image().topic("payments")).isNull();
        assertThat(r.image().offset()).isEqualTo(2);
    }

    @Test
    void collidingNameIsRejected() {
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, topicWithPartitions(TOPIC, "a.b", 1))
                .image();
        ApplyResult r = MetadataApplier.apply(img, 1, 2, topicWithPartitions(new UUID(3, 3), "a_b", 1));
        assertThat(r.error()).isEqualTo(ErrorCode.TOPIC_ALREADY_EXISTS);
        assertThat(r.message()).contains("collides with 'a.b'");
    }

    @Test
    void partitionChangeChecksThePartitionEpochAndBumpsEpochs() {
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, topicWithPartitions(TOPIC, "t", 1))
                .image();
        img = MetadataApplier.apply(img, 1, 1, List.of(unfencedBroker(2))).image();
        PartitionChangeRecord change = PartitionChangeRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .setExpectedPartitionEpoch(0)
                .setLeader(2)
                .addIsr(2)
                .build();
        MetadataImage next = MetadataApplier.apply(img, 1, 2, List.of(MetadataRecords.of(change)))
                .image();
        PartitionImage p = next.partition(TOPIC, 0);
        assertThat(p.leader()).isEqualTo(2);
        assertThat(p.leaderEpoch()).isEqualTo(1);
        assertThat(p.partitionEpoch()).isEqualTo(1);
        assertThat(p.isr()).containsExactly(2);

        ApplyResult stale = MetadataApplier.apply(next, 1, 3, List.of(MetadataRecords.of(change)));
        assertThat(stale.error()).isEqualTo(ErrorCode.INVALID_UPDATE_VERSION);
        assertThat(stale.image().partition(TOPIC, 0)).isEqualTo(p);
    }

    static MetadataRecord unfencedBroker(int id) {
        return broker(id).toBuilder()
                .setRegisterBroker(broker(id).getRegisterBroker().toBuilder().setFenced(false))
                .build();
    }

    @Test
    void aNewLeaderMustBeRegisteredAndUnfencedWhenTheEntryApplies() {
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, topicWithPartitions(TOPIC, "t", 1))
                .image();
        PartitionChangeRecord toTwo = PartitionChangeRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .setExpectedPartitionEpoch(0)
                .setLeader(2)
                .addIsr(2)
                .build();
        ApplyResult unknown = MetadataApplier.apply(img, 1, 2, List.of(MetadataRecords.of(toTwo)));
        assertThat(unknown.error()).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(unknown.message()).contains("new leader 2 of t-0 is fenced or not registered");
        img = MetadataApplier.apply(img, 1, 3, List.of(broker(2))).image(); // registered, fenced
        ApplyResult fenced = MetadataApplier.apply(img, 1, 4, List.of(MetadataRecords.of(toTwo)));
        assertThat(fenced.error()).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(fenced.image().partition(TOPIC, 0)).isEqualTo(img.partition(TOPIC, 0));
        // Going leaderless needs no live broker, and bumps the leader epoch too.
        PartitionChangeRecord none =
                toTwo.toBuilder().setLeader(PartitionImage.NO_LEADER).build();
        PartitionImage p = MetadataApplier.apply(img, 1, 5, List.of(MetadataRecords.of(none)))
                .image()
                .partition(TOPIC, 0);
        assertThat(p.leader()).isEqualTo(PartitionImage.NO_LEADER);
        assertThat(p.leaderEpoch()).isEqualTo(1);
        assertThat(p.partitionEpoch()).isEqualTo(1);
    }

    @Test
    void aJoiningReplicaMustStillBeUnfencedAtTheJudgedBrokerEpochWhenTheEntryApplies() {
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, topicWithPartitions(TOPIC, "t", 1))
                .image();
        img = MetadataApplier.apply(img, 1, 2, List.of(unfencedBroker(1))).image();
        img = MetadataApplier.apply(img, 1, 3, List.of(unfencedBroker(2))).image(); // broker epoch 3
        PartitionChangeRecord shrink = PartitionChangeRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .setExpectedPartitionEpoch(0)
                .setLeader(1)
                .addIsr(1)
                .build();
        img = MetadataApplier.apply(img, 1, 4, List.of(MetadataRecords.of(shrink)))
                .image();
        PartitionChangeRecord.Builder expand = PartitionChangeRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .setExpectedPartitionEpoch(1)
                .setLeader(1)
                .addAllIsr(List.of(1, 2))
                .addJoiningReplicas(2);

        // Broker 2 registered again (epoch 5) after the leader judged its epoch-3 process.
        MetadataImage restarted =
                MetadataApplier.apply(img, 1, 5, List.of(unfencedBroker(2))).image();
        ApplyResult stale = MetadataApplier.apply(
                restarted,
                1,
                6,
                List.of(MetadataRecords.of(
                        expand.clone().addJoiningBrokerEpochs(3).build())));
        assertThat(stale.error()).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(stale.message()).contains("joining replica 2 was judged at broker epoch 3 but is registered at 5");
        assertThat(stale.image().partition(TOPIC, 0).isr()).containsExactly(1);

        MetadataImage fencedImg =
                MetadataApplier.apply(img, 1, 5, List.of(broker(2))).image(); // fenced
        assertThat(MetadataApplier.apply(
                                fencedImg,
                                1,
                                6,
                                List.of(MetadataRecords.of(expand.clone()
                                        .addJoiningBrokerEpochs(-1)
                                        .build())))
                        .error())
                .as("a fenced joiner, epoch unknown")
                .isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(MetadataApplier.apply(
                                img,
                                1,
                                5,
                                List.of(MetadataRecords.of(expand.clone().build())))
                        .error())
                .as("epochs not one per joining replica")
                .isEqualTo(ErrorCode.INELIGIBLE_REPLICA);

        PartitionImage joined = MetadataApplier.apply(
                        img,
                        1,
                        5,
                        List.of(MetadataRecords.of(
                                expand.clone().addJoiningBrokerEpochs(3).build())))
                .image()
                .partition(TOPIC, 0);
        assertThat(joined.isr()).containsExactly(1, 2);
        assertThat(joined.partitionEpoch()).isEqualTo(2);
    }

    @Test
    void typeThatDoesNotMatchTheBodyOrAnUnknownVersionIsRejected() {
        MetadataRecord wrongType =
                broker(1).toBuilder().setType(RecordType.TOPIC).build();
        assertThat(MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, List.of(wrongType))
                        .error())
                .isEqualTo(ErrorCode.INVALID_REQUEST);
        MetadataRecord v2 = broker(1).toBuilder().setVersion(2).build();
        assertThat(MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, List.of(v2)).message())
                .contains("unknown record version 2");
    }

    @Test
    void snapshotRoundTripGivesAnEqualImage() {
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 2, 5, List.of(broker(1), broker(2)))
                .image();
        img = MetadataApplier.apply(img, 2, 6, topicWithPartitions(TOPIC, "t", 4))
                .image();
        assertThat(MetadataImage.fromSnapshot(img.toSnapshot())).isEqualTo(img);
    }

    static MetadataRecord clusterId(String id) {
        return MetadataRecords.of(ClusterIdRecord.newBuilder().setClusterId(id).build());
    }

    static MetadataRecord active(int id) {
        return MetadataRecords.of(
                ActiveControllerRecord.newBuilder().setControllerId(id).build());
    }

    @Test
    void theClusterIdIsSetOnceAndAnotherIdRejectsTheWholeEntry() {
        assertThat(MetadataImage.EMPTY.clusterId()).isNull();
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, List.of(clusterId("c-1"), active(2)))
                .image();
        assertThat(img.clusterId()).isEqualTo("c-1");
        assertThat(img.activeControllerId()).isEqualTo(2);

        ApplyResult same = MetadataApplier.apply(img, 1, 2, List.of(clusterId("c-1")));
        assertThat(same.ok()).isTrue();
        assertThat(same.image().clusterId()).isEqualTo("c-1");

        ApplyResult other = MetadataApplier.apply(img, 2, 3, List.of(active(3), broker(1), clusterId("c-2")));
        assertThat(other.error()).isEqualTo(ErrorCode.INCONSISTENT_CLUSTER_ID);
        assertThat(other.message()).contains("c-2").contains("c-1");
        assertThat(other.image().clusterId()).isEqualTo("c-1");
        assertThat(other.image().activeControllerId())
                .as("rejected entry changes nothing")
                .isEqualTo(2);
        assertThat(other.image().broker(1)).isNull();
        assertThat(other.image().offset()).isEqualTo(3);

        assertThat(MetadataApplier.apply(img, 2, 4, List.of(clusterId(" "))).error())
                .isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(MetadataApplier.apply(img, 2, 4, List.of(active(-1))).error())
                .isEqualTo(ErrorCode.INVALID_REQUEST);
    }

    @Test
    void theActiveControllerFollowsTheLastAnnouncementAndSurvivesASnapshot() {
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, List.of(clusterId("c-1"), active(1)))
                .image();
        img = MetadataApplier.apply(img, 2, 2, List.of(broker(1))).image();
        img = MetadataApplier.apply(img, 3, 3, List.of(active(3))).image();
        assertThat(img.activeControllerId()).isEqualTo(3);
        MetadataImage back = MetadataImage.fromSnapshot(img.toSnapshot());
        assertThat(back).isEqualTo(img);
        assertThat(back.clusterId()).isEqualTo("c-1");
        assertThat(back.activeControllerId()).isEqualTo(3);
        assertThat(MetadataImage.fromSnapshot(MetadataImage.EMPTY.toSnapshot()).activeControllerId())
                .isEqualTo(MetadataImage.NO_CONTROLLER);
    }

    private static MetadataRecord producerIds(long first, long size) {
        return MetadataRecords.of(ProducerIdsRecord.newBuilder()
                .setBrokerId(1)
                .setBrokerEpoch(5)
                .setFirstProducerId(first)
                .setBlockSize(size)
                .build());
    }

    @Test
    void producerIdBlocksMustStartAtTheNextIdAndSurviveASnapshot() {
        MetadataImage img = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, List.of(producerIds(0, 1000)))
                .image();
        assertThat(img.nextProducerId()).isEqualTo(1000);
        img = MetadataApplier.apply(img, 1, 2, List.of(producerIds(1000, 1000))).image();
        assertThat(img.nextProducerId()).isEqualTo(2000);

        // A block computed from an older image (a race, or a lagging new controller) is rejected.
        ApplyResult stale = MetadataApplier.apply(img, 2, 3, List.of(producerIds(1000, 1000)));
        assertThat(stale.error()).isEqualTo(ErrorCode.INVALID_UPDATE_VERSION);
        assertThat(stale.message()).contains("not the next one (2000)");
        assertThat(stale.image().nextProducerId()).isEqualTo(2000);

        for (long badSize : new long[] {0, -1, 1_000_001}) {
            ApplyResult bad = MetadataApplier.apply(img, 2, 4, List.of(producerIds(2000, badSize)));
            assertThat(bad.error()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(bad.image().nextProducerId()).isEqualTo(2000);
        }

        MetadataImage replayed = MetadataImage.fromSnapshot(img.toSnapshot());
        assertThat(replayed).isEqualTo(img);
        assertThat(replayed.nextProducerId()).isEqualTo(2000);
        assertThat(MetadataImage.fromSnapshot(MetadataImage.EMPTY.toSnapshot()).nextProducerId())
                .isZero();
    }
}
