package io.stellflow.controller.server;

import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.FenceBrokerRecord;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.UnfenceBrokerRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * Records for fencing and unfencing a broker, with the partition leader/ISR changes that go in the
 * same entry (the rules are {@link Elections}').
 *
 * <p>Fencing removes the broker from every ISR (unless it is the last member: the ISR then keeps it
 * and the partition has no leader) and moves leadership of the partitions it led to the first
 * replica, in assignment order, that is in the new ISR and unfenced; when there is none and
 * {@code unclean.leader.election.enable} holds for the topic, to the first unfenced replica (ISR =
 * that replica). Unfencing makes the broker leader of leaderless partitions whose ISR holds it (and,
 * with unclean election enabled, of leaderless partitions with no live ISR member that it replicates).
 *
 * <p>Thread-safety: stateless.
 */
final class Fencing {
    private Fencing() {}

    /** Records of one entry and the partition changes among them (to report once committed). */
    record Plan(List<MetadataRecord> records, List<Elections.Change> changes) {}

    static Plan fence(MetadataImage img, BrokerRegistration b, boolean uncleanDefault) {
        return fence(img, b, uncleanDefault, new StorageReports());
    }

    /** As {@link #fence(MetadataImage, BrokerRegistration, boolean)}; never elects a replica {@code storage} reports failed. */
    static Plan fence(MetadataImage img, BrokerRegistration b, boolean uncleanDefault, StorageReports storage) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(FenceBrokerRecord.newBuilder()
                .setBrokerId(b.id())
                .setBrokerEpoch(b.brokerEpoch())
                .build()));
        List<Elections.Change> changes = leaveBroker(img, b.id(), uncleanDefault, storage);
        records.addAll(Elections.records(changes));
        return new Plan(records, changes);
    }

    /**
     * Partition changes that take {@code brokerId} out of leadership and ISRs; a new leader is never
     * a replica {@code storage} reports failed.
     */
    static List<Elections.Change> leaveBroker(
            MetadataImage img, int brokerId, boolean uncleanDefault, StorageReports storage) {
        IntPredicate before = Elections.live(img);
        IntPredicate live = id -> id != brokerId && before.test(id);
        List<Elections.Change> changes = new ArrayList<>();
        for (TopicImage t : img.topicsByName().values()) {
            boolean unclean = Elections.uncleanEnabled(t, uncleanDefault);
            for (PartitionImage p : t.partitions()) {
                Elections.Change c = Elections.afterLeave(
                        t, p, brokerId, storage.eligible(live, t, p), unclean, Elections.Reason.FENCE);
                if (c != null) {
                    changes.add(c);
                }
            }
        }
        return changes;
    }

    static Plan unfence(MetadataImage img, BrokerRegistration b, boolean uncleanDefault) {
        return unfence(img, b, uncleanDefault, new StorageReports());
    }

    /** As {@link #unfence(MetadataImage, BrokerRegistration, boolean)}; never elects a replica {@code storage} reports failed. */
    static Plan unfence(MetadataImage img, BrokerRegistration b, boolean uncleanDefault, StorageReports storage) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(UnfenceBrokerRecord.newBuilder()
                .setBrokerId(b.id())
                .setBrokerEpoch(b.brokerEpoch())
                .build()));
        IntPredicate before = Elections.live(img);
        IntPredicate live = id -> id == b.id() || before.test(id);
        List<Elections.Change> changes = new ArrayList<>();
        for (TopicImage t : img.topicsByName().values()) {
            boolean unclean = Elections.uncleanEnabled(t, uncleanDefault);
            for (PartitionImage p : t.partitions()) {
                if (!p.replicas().contains(b.id())) {
                    continue;
                }
                Elections.Change c = Elections.electLeaderless(
                        t, p, storage.eligible(live, t, p), unclean, Elections.Reason.UNFENCE);
                if (c != null) {
                    changes.add(c);
                }
            }
        }
        records.addAll(Elections.records(changes));
        return new Plan(records, changes);
    }

    /**
     * Null when every follower {@code newIsr} adds to {@code p}'s ISR is still the process the
     * leader judged, otherwise why not. {@code brokerEpochs} holds, per member of {@code newIsr} in
     * its order, the broker epoch of the process whose fetches the leader saw (-1: unknown, not
     * checked); empty: nothing is checked (a leader that does not send them). A joining member whose
     * epoch is not its current registration's registered again since those fetches (a restart): its
     * log may have lost what they reached, so it cannot join on them (KIP-903's rule).
     */
    static String checkJoiningEpochs(
            MetadataImage img, PartitionImage p, List<Integer> newIsr, List<Long> brokerEpochs) {
        if (brokerEpochs.isEmpty()) {
            return null;
        }
        if (brokerEpochs.size() != newIsr.size()) {
            return "new ISR " + newIsr + " has " + brokerEpochs.size() + " broker epochs";
        }
        for (int i = 0; i < newIsr.size(); i++) {
            int r = newIsr.get(i);
            long epoch = brokerEpochs.get(i);
            if (epoch < 0 || p.isr().contains(r)) {
                continue;
            }
            BrokerRegistration b = img.broker(r);
            if (b == null || b.brokerEpoch() != epoch) {
                return "broker " + r + " cannot join the ISR on fetches of broker epoch " + epoch
                        + ": it is registered at epoch " + (b == null ? "none" : Long.toString(b.brokerEpoch()))
                        + " (it restarted since)";
            }
        }
        return null;
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
}
