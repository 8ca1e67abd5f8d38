package io.stellflow.controller.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.controller.proto.ActiveControllerRecord;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.ConfigChangeRecord;
import io.stellflow.controller.proto.FenceBrokerRecord;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionChangeRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.RemoveTopicRecord;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.controller.proto.UnfenceBrokerRecord;
import io.stellflow.controller.server.SnapshotFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded random command sequences (valid and invalid) applied on three replicas in the same order give
 * identical images; a snapshot taken midway, written and read back, then replayed, gives the same image.
 */
class MetadataDeterminismTest {
    @TempDir
    Path dir;

    /** Random commands generated against the generator's own view, so most apply and some are rejected. */
    static List<List<MetadataRecord>> commands(Random rnd, int count) {
        List<List<MetadataRecord>> out = new ArrayList<>();
        MetadataImage view = MetadataImage.EMPTY;
        for (int i = 0; i < count; i++) {
            List<MetadataRecord> cmd = new ArrayList<>();
            int kind = rnd.nextInt(10);
            List<TopicImage> topics = new ArrayList<>(view.topicsByName().values());
            List<BrokerRegistration> brokers = new ArrayList<>(view.brokers().values());
            switch (kind) {
                case 0 ->
                    cmd.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                            .setBrokerId(rnd.nextInt(6))
                            .setIncarnationId(MetadataRecords.uuid(new UUID(rnd.nextLong(), rnd.nextLong())))
                            .setRack("r" + rnd.nextInt(3))
                            .setFenced(true)
                            .build()));
                case 1, 2 -> {
                    UUID id = new UUID(rnd.nextLong(), rnd.nextLong());
                    cmd.add(MetadataRecords.of(TopicRecord.newBuilder()
                            .setTopicId(MetadataRecords.uuid(id))
                            .setName((rnd.nextBoolean() ? "t." : "t_") + rnd.nextInt(20))
                            .build()));
                    int parts = 1 + rnd.nextInt(4);
                    for (int p = 0; p < parts; p++) {
                        List<Integer> replicas = List.of(p % 3, (p + 1) % 3);
                        cmd.add(MetadataRecords.of(PartitionRecord.newBuilder()
                                .setTopicId(MetadataRecords.uuid(id))
                                .setPartition(p)
                                .addAllReplicas(replicas)
                                .setLeader(replicas.get(0))
                                .addAllIsr(replicas)
                                .build()));
                    }
                }
                case 3 -> {
                    if (!brokers.isEmpty()) {
                        BrokerRegistration b = brokers.get(rnd.nextInt(brokers.size()));
                        long epoch = rnd.nextInt(10) == 0 ? b.brokerEpoch() + 1 : b.brokerEpoch();
                        cmd.add(
                                b.fenced()
                                        ? MetadataRecords.of(UnfenceBrokerRecord.newBuilder()
                                                .setBrokerId(b.id())
                                                .setBrokerEpoch(epoch)
                                                .build())
                                        : MetadataRecords.of(FenceBrokerRecord.newBuilder()
                                                .setBrokerId(b.id())
                                                .setBrokerEpoch(epoch)
                                                .build()));
                    }
                }
                case 4, 5 -> {
                    if (!topics.isEmpty()) {
                        TopicImage t = topics.get(rnd.nextInt(topics.size()));
                        PartitionImage p =
                                t.partitions().get(rnd.nextInt(t.partitions().size()));
                        int leader = p.replicas().get(rnd.nextInt(p.replicas().size()));
                        int epoch = rnd.nextInt(8) == 0 ? p.partitionEpoch() - 1 : p.partitionEpoch();
                        cmd.add(MetadataRecords.of(PartitionChangeRecord.newBuilder()
                                .setTopicId(MetadataRecords.uuid(t.id()))
                                .setPartition(p.partition())
                                .setExpectedPartitionEpoch(epoch)
                                .setLeader(leader)
                                .addIsr(leader)
                                .build()));
                    }
                }
                case 6 -> {
                    if (!topics.isEmpty()) {
                        TopicImage t = topics.get(rnd.nextInt(topics.size()));
                        cmd.add(MetadataRecords.of(ConfigChangeRecord.newBuilder()
                                .setTopicId(MetadataRecords.uuid(t.id()))
                                .setKey("retention.ms")
                                .setValue(String.valueOf(rnd.nextInt(1000)))
                                .setRemove(rnd.nextInt(4) == 0)
                                .build()));
                    }
                }
                case 8 ->
                    // the first applies; a different one later is rejected
                    cmd.add(MetadataRecords.of(ClusterIdRecord.newBuilder()
                            .setClusterId("cluster-" + rnd.nextInt(2))
                            .build()));
                case 9 ->
                    cmd.add(MetadataRecords.of(ActiveControllerRecord.newBuilder()
                            .setControllerId(rnd.nextInt(3))
                            .build()));
                default -> {
                    if (!topics.isEmpty()) {
                        TopicImage t = topics.get(rnd.nextInt(topics.size()));
                        cmd.add(MetadataRecords.of(RemoveTopicRecord.newBuilder()
                                .setTopicId(MetadataRecords.uuid(t.id()))
                                .build()));
                    }
                }
            }
            out.add(cmd);
            view = MetadataApplier.apply(view, 1, i + 1, cmd).image();
        }
        return out;
    }

    @Test
    void threeReplicasApplyingTheSameSequenceAgreeAndSnapshotPlusReplayMatches() throws IOException {
        long seed = System.nanoTime();
        System.out.println("MetadataDeterminismTest seed=" + seed);
        for (int round = 0; round < 8; round++) {
            long roundSeed = seed + round;
            Random rnd = new Random(roundSeed);
            List<List<MetadataRecord>> cmds = commands(rnd, 300);
            MetadataImage[] replicas = {MetadataImage.EMPTY, MetadataImage.EMPTY, MetadataImage.EMPTY};
            int cut = rnd.nextInt(cmds.size());
            MetadataImage atCut = null;
            int rejected = 0;
            for (int i = 0; i < cmds.size(); i++) {
                long term = 1 + i / 50;
                for (int r = 0; r < 3; r++) {
                    ApplyResult res = MetadataApplier.apply(replicas[r], term, i + 1, cmds.get(i));
                    replicas[r] = res.image();
                    if (r == 0 && !res.ok()) {
                        rejected++;
                    }
                }
                assertThat(replicas[1]).as("seed %d entry %d", roundSeed, i).isEqualTo(replicas[0]);
                assertThat(replicas[2]).as("seed %d entry %d", roundSeed, i).isEqualTo(replicas[0]);
                if (i == cut) {
                    atCut = replicas[0];
                }
            }
            assertThat(rejected).as("seed %d exercises rejections", roundSeed).isPositive();
            Path file = dir.resolve("snapshot." + round);
            SnapshotFile.write(file, atCut.toSnapshot());
            MetadataImage replayed = MetadataImage.fromSnapshot(SnapshotFile.read(file));
            assertThat(replayed).isEqualTo(atCut);
            for (int i = cut + 1; i < cmds.size(); i++) {
                replayed = MetadataApplier.apply(replayed, 1 + i / 50, i + 1, cmds.get(i))
                        .image();
            }
            assertThat(replayed)
                    .as("seed %d snapshot at %d + replay", roundSeed, cut)
                    .isEqualTo(replicas[0]);
        }
    }

    @Test
    void aCorruptSnapshotFileIsRefusedNamingTheFile() throws IOException {
        Path file = dir.resolve("snapshot.1_5");
        MetadataImage img = MetadataApplier.apply(
                        MetadataImage.EMPTY, 1, 5, commands(new Random(42), 1).get(0))
                .image();
        SnapshotFile.write(file, img.toSnapshot());
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length - 1] ^= 0x5A;
        Files.write(file, bytes);
        assertThatThrownBy(() -> SnapshotFile.read(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("CRC-32C")
                .hasMessageContaining(file.toString());
        Files.write(file, java.util.Arrays.copyOf(bytes, 10));
        assertThatThrownBy(() -> SnapshotFile.read(file)).hasMessageContaining("shorter than its header");
    }
}
