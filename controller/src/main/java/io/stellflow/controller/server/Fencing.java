package io.stellflow.controller.server;

import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.FenceBrokerRecord;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionChangeRecord;
import io.stellflow.controller.proto.UnfenceBrokerRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/**
 * Records for fencing and unfencing a broker, with the partition leader/ISR changes that go in the
 * same entry.
 *
 * <p>Fencing removes the broker from every ISR (unless it is the last member: the ISR then keeps it
 * and the partition has no leader, as unclean election is off) and moves leadership of the
 * partitions it led to the first replica, in assignment order, that is in the new ISR and unfenced.
 * Unfencing makes the broker leader of leaderless partitions whose ISR holds it.
 *
 * <p>Thread-safety: stateless.
 */
final class Fencing {
    private Fencing() {}

    static List<MetadataRecord> fence(MetadataImage img, BrokerRegistration b) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(FenceBrokerRecord.newBuilder()
                .setBrokerId(b.id())
                .setBrokerEpoch(b.brokerEpoch())
                .build()));
        records.addAll(leaveBroker(img, b.id()));
        return records;
    }

    /** Partition changes that take {@code brokerId} out of leadership and ISRs. */
    static List<MetadataRecord> leaveBroker(MetadataImage img, int brokerId) {
        List<MetadataRecord> records = new ArrayList<>();
        for (TopicImage t : img.topicsByName().values()) {
            for (PartitionImage p : t.partitions()) {
                if (p.leader() != brokerId && !p.isr().contains(brokerId)) {
                    continue;
                }
                List<Integer> isr = new ArrayList<>(p.isr());
                isr.remove(Integer.valueOf(brokerId));
                if (isr.isEmpty()) {
                    isr.add(brokerId); // last ISR member stays, leaderless
                }
                int leader = PartitionImage.NO_LEADER;
                for (int r : p.replicas()) {
                    BrokerRegistration rb = img.broker(r);
                    if (r != brokerId && isr.contains(r) && rb != null && !rb.fenced()) {
                        leader = r;
                        break;
                    }
                }
                if (p.leader() != brokerId && p.leader() != PartitionImage.NO_LEADER && isr.contains(p.leader())) {
                    leader = p.leader(); // a follower left: the leader stays
                }
                if (leader == p.leader() && isr.equals(p.isr())) {
                    continue;
                }
                records.add(change(t, p, leader, isr));
            }
        }
        return records;
    }

    static List<MetadataRecord> unfence(MetadataImage img, BrokerRegistration b) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(UnfenceBrokerRecord.newBuilder()
                .setBrokerId(b.id())
                .setBrokerEpoch(b.brokerEpoch())
                .build()));
        for (TopicImage t : img.topicsByName().values()) {
            for (PartitionImage p : t.partitions()) {
                if (p.leader() == PartitionImage.NO_LEADER && p.isr().contains(b.id())) {
                    records.add(change(t, p, b.id(), p.isr()));
                }
            }
        }
        return records;
    }

    /** Null when {@code newIsr} is acceptable for {@code p}, otherwise why not. */
    static String checkIsr(MetadataImage img, PartitionImage p, List<Integer> newIsr) {
        if (!newIsr.contains(p.leader())) {
            return "new ISR " + newIsr + " must contain the leader " + p.leader();
        }
        if (new HashSet<>(newIsr).size() != newIsr.size()) {
            return "new ISR " + newIsr + " has duplicates";
        }
        for (int r : newIsr) {
            if (!p.replicas().contains(r)) {
                return "broker " + r + " is not a replica " + p.replicas();
            }
            BrokerRegistration b = img.broker(r);
            if (!p.isr().contains(r) && (b == null || b.fenced())) {
                return "broker " + r + " is fenced and cannot join the ISR";
            }
        }
        return null;
    }

    private static MetadataRecord change(TopicImage t, PartitionImage p, int leader, List<Integer> isr) {
        return MetadataRecords.of(PartitionChangeRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(t.id()))
                .setPartition(p.partition())
                .setExpectedPartitionEpoch(p.partitionEpoch())
                .setLeader(leader)
                .addAllIsr(isr)
                .build());
    }
}
