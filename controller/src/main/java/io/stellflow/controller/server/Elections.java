package io.stellflow.controller.server;

import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionChangeRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partition leader election rules, as pure functions of a {@link MetadataImage} and a liveness
 * predicate (a replica is <em>live</em> when its broker is registered and unfenced; callers that build
 * the records of a fence or unfence pass the liveness the entry will have).
 *
 * <ul>
 *   <li><b>Clean election</b> (always tried first): the first replica in assignment order that is in
 *       the ISR and live. It never picks a replica outside the ISR.
 *   <li><b>Leaving broker</b> (fenced, or re-registered under a new incarnation): it leaves every ISR
 *       except as the last member (the ISR then keeps it and the partition goes leaderless, offline,
 *       as in Kafka); a partition it led gets a clean election over the remaining ISR.
 *   <li><b>Unclean election</b>, only when {@code unclean.leader.election.enable} is true for the
 *       topic (topic config, else the controller default) and no ISR member is live: the first live
 *       replica in assignment order becomes leader and the ISR becomes just that replica. Records the
 *       ISR had and it has not may be lost; {@link #committed} logs {@code UNCLEAN_LEADER_ELECTION}.
 *   <li><b>Preferred election</b>: the preferred replica (first of the assignment) becomes leader
 *       when it is live and in the ISR; the ISR is unchanged.
 *   <li><b>Automatic rebalance</b> ({@link #rebalance}): preferred elections for every broker whose
 *       share of not-led preferred partitions exceeds {@code leader.imbalance.per.broker.percentage}.
 * </ul>
 *
 * <p>Each result is a {@link Change} that becomes one {@code PartitionChangeRecord} naming the
 * partition epoch it was computed from; the applier rejects it when the partition changed meanwhile
 * (or when its new leader is fenced by then), and sets the partition epoch + 1 and, when the leader
 * changed (to a broker or to none), the leader epoch + 1. The {@value #UNCLEAN_KEY} values are
 * checked by {@code TopicConfigRules}.
 *
 * <p>Thread-safety: stateless.
 */
public final class Elections {
    private static final Logger LOG = LoggerFactory.getLogger(Elections.class);

    /** Topic config key (and controller default key) that allows unclean elections. */
    public static final String UNCLEAN_KEY = "unclean.leader.election.enable";

    private Elections() {}

    /** Why a partition's leader changes. */
    public enum Reason {
        /** Its leader (or an ISR member) was fenced or re-registered. */
        FENCE,
        /** A leaderless partition's replica came back (unfenced). */
        UNFENCE,
        /** A leaderless partition got a leader by the periodic or config-triggered re-evaluation. */
        OFFLINE,
        /** ElectLeaders PREFERRED. */
        PREFERRED,
        /** ElectLeaders UNCLEAN. */
        UNCLEAN,
        /** Automatic leader rebalancing back to the preferred replica. */
        REBALANCE,
        /**
         * A replica's broker reported it failed (a write error, an offline log dir) or, for a leaderless
         * partition, no longer failed.
         */
        STORAGE;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A new leader and ISR for one partition.
     *
     * @param topic the topic (for its id and name)
     * @param before the partition as the change was computed from (its partition epoch is expected)
     * @param leader new leader, or {@link PartitionImage#NO_LEADER}
     * @param isr new ISR, a subset of the assignment containing {@code leader} when there is one
     * @param unclean whether the new leader was taken from outside the ISR
     * @param reason why
     */
    public record Change(
            TopicImage topic, PartitionImage before, int leader, List<Integer> isr, boolean unclean, Reason reason) {
        public Change {
            isr = List.copyOf(isr);
        }

        /** The record that makes this change. */
        public MetadataRecord record() {
            return MetadataRecords.of(PartitionChangeRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(topic.id()))
                    .setPartition(before.partition())
                    .setExpectedPartitionEpoch(before.partitionEpoch())
                    .setLeader(leader)
                    .addAllIsr(isr)
                    .build());
        }

        /** Whether the leader changes (the leader epoch is bumped). */
        public boolean leaderChanged() {
            return leader != before.leader();
        }

        /** {@code topic-partition}. */
        public String name() {
            return topic.name() + "-" + before.partition();
        }
    }

    /** Outcome of one requested election (ElectLeaders): a change, or the error and why. */
    public record Outcome(ErrorCode error, String message, Change change) {
        static Outcome error(ErrorCode error, String message) {
            return new Outcome(error, message, null);
        }
    }

    /** The records of {@code changes}, in order. */
    public static List<MetadataRecord> records(List<Change> changes) {
        List<MetadataRecord> out = new ArrayList<>(changes.size());
        changes.forEach(c -> out.add(c.record()));
        return out;
    }

    /** Live in {@code img}: registered and unfenced. */
    public static IntPredicate live(MetadataImage img) {
        return id -> {
            BrokerRegistration b = img.broker(id);
            return b != null && !b.fenced();
        };
    }

    /**
     * Whether unclean election is allowed for {@code t}: its {@value #UNCLEAN_KEY} override when set,
     * else {@code controllerDefault}.
     */
    public static boolean uncleanEnabled(TopicImage t, boolean controllerDefault) {
        String v = t.config().get(UNCLEAN_KEY);
        return v == null ? controllerDefault : Boolean.parseBoolean(v.strip());
    }

    /** First replica in assignment order that is in {@code isr} and live, or NO_LEADER. */
    public static int cleanLeader(List<Integer> replicas, List<Integer> isr, IntPredicate live) {
        for (int r : replicas) {
            if (isr.contains(r) && live.test(r)) {
                return r;
            }
        }
        return PartitionImage.NO_LEADER;
    }

    /** First live replica in assignment order (whether in the ISR or not), or NO_LEADER. */
    public static int firstLive(List<Integer> replicas, IntPredicate live) {
        for (int r : replicas) {
            if (live.test(r)) {
                return r;
            }
        }
        return PartitionImage.NO_LEADER;
    }

    /**
     * The state of {@code p} after broker {@code gone} left (fenced or re-registered): it leaves the
     * ISR unless it is the last member; if it led, the clean choice over the rest of the ISR leads, or
     * with {@code unclean} and no live ISR member the first live replica (ISR = that replica), or
     * nobody. Null when {@code p} does not change.
     *
     * @param live liveness after the departure ({@code gone} must test false)
     */
    public static Change afterLeave(
            TopicImage t, PartitionImage p, int gone, IntPredicate live, boolean unclean, Reason reason) {
        if (p.leader() != gone && !p.isr().contains(gone)) {
            return null;
        }
        List<Integer> isr = new ArrayList<>(p.isr());
        isr.remove(Integer.valueOf(gone));
        if (isr.isEmpty()) {
            isr.add(gone); // the last ISR member stays: only it may have every committed record
        }
        int leader = p.leader();
        boolean uncleanChoice = false;
        if (leader == gone || leader == PartitionImage.NO_LEADER) {
            leader = cleanLeader(p.replicas(), isr, live);
            if (leader == PartitionImage.NO_LEADER && unclean) {
                leader = firstLive(p.replicas(), live);
                if (leader != PartitionImage.NO_LEADER) {
                    isr = List.of(leader);
                    uncleanChoice = true;
                }
            }
        }
        if (leader == p.leader() && isr.equals(p.isr())) {
            return null;
        }
        return new Change(t, p, leader, isr, uncleanChoice, reason);
    }

    /**
     * A leader for leaderless {@code p}: the clean choice, else with {@code unclean} the first live
     * replica (ISR = that replica). Null when {@code p} has a leader or nobody is eligible.
     */
    public static Change electLeaderless(
            TopicImage t, PartitionImage p, IntPredicate live, boolean unclean, Reason reason) {
        if (p.leader() != PartitionImage.NO_LEADER) {
            return null;
        }
        int clean = cleanLeader(p.replicas(), p.isr(), live);
        if (clean != PartitionImage.NO_LEADER) {
            return new Change(t, p, clean, p.isr(), false, reason);
        }
        if (unclean) {
            int any = firstLive(p.replicas(), live);
            if (any != PartitionImage.NO_LEADER) {
                return new Change(t, p, any, List.of(any), true, reason);
            }
        }
        return null;
    }

    /**
     * Leaders for every leaderless partition of {@code img} that has an eligible replica, with each
     * topic's unclean setting ({@code uncleanDefault} when the topic has none).
     */
    public static List<Change> electLeaderless(
            MetadataImage img, IntPredicate live, boolean uncleanDefault, Reason reason) {
        return electLeaderless(img, live, uncleanDefault, reason, new StorageReports());
    }

    /** As {@link #electLeaderless(MetadataImage, IntPredicate, boolean, Reason)}, never electing a failed replica. */
    static List<Change> electLeaderless(
            MetadataImage img, IntPredicate live, boolean uncleanDefault, Reason reason, StorageReports storage) {
        List<Change> out = new ArrayList<>();
        for (TopicImage t : img.topicsByName().values()) {
            boolean unclean = uncleanEnabled(t, uncleanDefault);
            for (PartitionImage p : t.partitions()) {
                Change c = electLeaderless(t, p, storage.eligible(live, t, p), unclean, reason);
                if (c != null) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    /** Leaders for the leaderless partitions of one topic; see {@link #electLeaderless(MetadataImage, IntPredicate, boolean, Reason)}. */
    public static void electLeaderless(
            TopicImage t, IntPredicate live, boolean unclean, Reason reason, List<Change> out) {
        for (PartitionImage p : t.partitions()) {
            Change c = electLeaderless(t, p, live, unclean, reason);
            if (c != null) {
                out.add(c);
            }
        }
    }

    /**
     * A requested preferred election: ELECTION_NOT_NEEDED when the preferred replica leads already,
     * PREFERRED_LEADER_NOT_AVAILABLE when it is not live or not in the ISR, else the change.
     */
    public static Outcome preferred(TopicImage t, PartitionImage p, IntPredicate live, Reason reason) {
        int preferred = p.replicas().get(0);
        if (p.leader() == preferred) {
            return Outcome.error(
                    ErrorCode.ELECTION_NOT_NEEDED, "the preferred replica " + preferred + " is the leader already");
        }
        if (!live.test(preferred)) {
            return Outcome.error(
                    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                    "the preferred replica " + preferred + " is fenced or not registered");
        }
        if (!p.isr().contains(preferred)) {
            return Outcome.error(
                    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                    "the preferred replica " + preferred + " is not in the ISR " + p.isr());
        }
        return new Outcome(ErrorCode.NONE, "", new Change(t, p, preferred, p.isr(), false, reason));
    }

    /**
     * A requested unclean election (Kafka's ElectionType.UNCLEAN, whatever the topic config says):
     * ELECTION_NOT_NEEDED when the partition has a leader; else the clean choice when there is one,
     * else the first live replica with ISR = {it}; ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is
     * live.
     */
    public static Outcome unclean(TopicImage t, PartitionImage p, IntPredicate live) {
        if (p.leader() != PartitionImage.NO_LEADER) {
            return Outcome.error(
                    ErrorCode.ELECTION_NOT_NEEDED, "the partition has a leader (" + p.leader() + ") already");
        }
        Change c = electLeaderless(t, p, live, true, Reason.UNCLEAN);
        if (c == null) {
            return Outcome.error(
                    ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                    "no replica of " + p.replicas() + " is live (registered and unfenced)");
        }
        return new Outcome(ErrorCode.NONE, "", c);
    }

    /**
     * Automatic leader rebalancing: for each live broker, the ratio of partitions whose preferred
     * replica it is but which it does not lead, over all partitions whose preferred replica it is; when
     * that ratio exceeds {@code percentage / 100}, a preferred election for each of those partitions
     * where it is in the ISR. In topic-name, then partition order.
     */
    public static List<Change> rebalance(MetadataImage img, IntPredicate live, int percentage) {
        return rebalance(img, live, percentage, new StorageReports());
    }

    /** As {@link #rebalance(MetadataImage, IntPredicate, int)}, never electing a failed replica. */
    static List<Change> rebalance(MetadataImage img, IntPredicate live, int percentage, StorageReports storage) {
        Map<Integer, int[]> counts = new TreeMap<>(); // broker -> {preferred, not led}
        for (TopicImage t : img.topicsByName().values()) {
            for (PartitionImage p : t.partitions()) {
                int[] c = counts.computeIfAbsent(p.replicas().get(0), k -> new int[2]);
                c[0]++;
                if (p.leader() != p.replicas().get(0)) {
                    c[1]++;
                }
            }
        }
        List<Change> out = new ArrayList<>();
        for (TopicImage t : img.topicsByName().values()) {
            for (PartitionImage p : t.partitions()) {
                int preferred = p.replicas().get(0);
                int[] c = counts.get(preferred);
                if (p.leader() == preferred || !imbalanced(c[1], c[0], percentage)) {
                    continue;
                }
                Outcome o = preferred(t, p, storage.eligible(live, t, p), Reason.REBALANCE);
                if (o.change() != null) {
                    out.add(o.change());
                }
            }
        }
        return out;
    }

    /** {@code notLed / preferred > percentage / 100}, in integers. */
    static boolean imbalanced(int notLed, int preferred, int percentage) {
        return preferred > 0 && (long) notLed * 100 > (long) percentage * preferred;
    }

    /**
     * After {@code changes} committed: one {@code UNCLEAN_LEADER_ELECTION} line (WARN) and one
     * {@code stellflow.unclean.election.count} per unclean change.
     */
    public static void committed(List<Change> changes, ControllerMetrics metrics) {
        for (Change c : changes) {
            if (c.unclean()) {
                metrics.uncleanElection();
                LOG.warn(
                        "UNCLEAN_LEADER_ELECTION partition={} topic_id={} leader={} leader_epoch={} old_isr={} "
                                + "new_isr={} reason={}: records the old ISR had may be lost",
                        c.name(),
                        c.topic().id(),
                        c.leader(),
                        c.before().leaderEpoch() + 1,
                        c.before().isr(),
                        c.isr(),
                        c.reason().label());
            }
        }
    }
}
