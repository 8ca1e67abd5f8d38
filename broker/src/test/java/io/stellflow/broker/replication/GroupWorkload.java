package io.stellflow.broker.replication;

import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The fault checker's consumer-group load (issue #19): members of group {@value #GROUP} ({@link
 * GroupMember}, our {@code StellflowConsumer} with {@code subscribe}) read the checked topic and
 * commit while the checker injects its broker faults, and each round one member joins, leaves
 * ({@code close}), crashes (drops its consumer without leaving) or pauses (stops polling until the
 * coordinator evicts it, then tries a commit: it must be refused) — {@link #act}. A poller thread
 * reads the group's committed offsets every {@link #COMMITTED_POLL_MS} ms (AdminGroups, OffsetFetch
 * v1) and {@link GroupLedger} checks that none goes backwards. After each round, with the faults
 * healed, {@link #settle} waits for and checks the steady state:
 *
 * <ul>
 *   <li>DescribeGroups shows the group Stable with exactly the live members, each partition owned by
 *       exactly one of them, nothing pending revocation, and each member's listener agreeing with
 *       its assignment ({@code GROUP_NOT_STEADY});
 *   <li>the committed offset of every partition reaches the highest acknowledged offset seen when
 *       the round healed ({@code GROUP_COMMIT_STUCK});
 *   <li>every acknowledged record below the committed offset was handed to some member ({@link
 *       GroupLedger#verifyDelivered}).
 * </ul>
 *
 * <p>Members number between {@link #MIN_MEMBERS} and {@link #MAX_MEMBERS}; a pause happens only with
 * another live member, so the evicted member's partitions move on and its stale commit would be
 * visible as a committed offset moving back. Brokers run with {@link #brokerProps}: a session
 * timeout of {@value #SESSION_TIMEOUT_MS} ms so evictions take seconds.
 *
 * <p>Thread-safety: {@link #start}, {@link #act}, {@link #settle} and {@link #close} from the test
 * thread.
 */
final class GroupWorkload implements AutoCloseable {
    static final String GROUP = "checker-group";
    static final int MIN_MEMBERS = 2;
    static final int MAX_MEMBERS = 4;
    static final int INITIAL_MEMBERS = 3;
    static final long SESSION_TIMEOUT_MS = 2000;
    static final long HEARTBEAT_INTERVAL_MS = 300;
    static final long COMMITTED_POLL_MS = 200;

    private final FaultCluster cluster;
    private final String topic;
    private final int partitions;
    private final GroupLedger ledger;
    private final StellflowAdmin admin;
    /** Members that poll (not left, crashed or being paused). */
    private final List<GroupMember> live = new ArrayList<>();
    /** Members that left or crashed, closed at the end. */
    private final List<GroupMember> gone = new ArrayList<>();

    private final List<GroupMember> paused = new ArrayList<>();
    private final Map<String, Integer> actionCounts = new HashMap<>();
    private CompletableFuture<String> action = CompletableFuture.completedFuture("none");
    private int nextMember;
    private volatile boolean polling;
    private Thread poller;

    GroupWorkload(FaultCluster cluster, String topic, Ledger ledger) {
        this.cluster = cluster;
        this.topic = topic;
        this.partitions = ledger.partitions();
        this.ledger = new GroupLedger(ledger);
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        p.setProperty("request.timeout.ms", "2000");
        p.setProperty("socket.connection.setup.timeout.ms", "2000");
        p.setProperty("retries", "3");
        p.setProperty("retry.backoff.ms", "50");
        p.setProperty("retry.backoff.max.ms", "500");
        this.admin = new StellflowAdmin(p);
    }

    /** The broker settings the group load needs: 3 offsets partitions, short sessions. */
    static Map<String, String> brokerProps() {
        return Map.of(
                "offsets.topic.num.partitions", "3",
                "group.consumer.session.timeout.ms", Long.toString(SESSION_TIMEOUT_MS),
                "group.consumer.heartbeat.interval.ms", Long.toString(HEARTBEAT_INTERVAL_MS));
    }

    GroupLedger ledger() {
        return ledger;
    }

    private Properties memberProps() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        p.setProperty("client.id", "checker-member-" + nextMember);
        p.setProperty("group.id", GROUP);
        p.setProperty("auto.offset.reset", "earliest");
        p.setProperty("enable.auto.commit", "false");
        p.setProperty("fetch.max.wait.ms", "200");
        p.setProperty("max.poll.interval.ms", "5000"); // the rebalance timeout
        p.setProperty("default.api.timeout.ms", "5000");
        p.setProperty("request.timeout.ms", "3000");
        p.setProperty("retry.backoff.ms", "50");
        p.setProperty("socket.connection.setup.timeout.ms", "2000");
        return p;
    }

    void start() {
        for (int i = 0; i < INITIAL_MEMBERS; i++) {
            join();
        }
        polling = true;
        poller = Thread.ofPlatform().name("checker-committed").daemon(true).start(this::pollCommitted);
    }

    private GroupMember join() {
        GroupMember m = new GroupMember("member-" + nextMember++, memberProps(), topic, ledger, new MemberView());
        m.start();
        live.add(m);
        return m;
    }

    private void pollCommitted() {
        while (polling) {
            committed("poller");
            try {
                Thread.sleep(COMMITTED_POLL_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /**
     * The group's committed offsets (also fed to the ledger's check), or null on an error. One read
     * at a time, each ingested before the next is sent: the answers of two overlapping reads may
     * arrive in either order, and the older one ingested last would look like an offset moving
     * back.
     */
    private synchronized Map<TopicPartition, Long> committed(String from) {
        try {
            Map<TopicPartition, Long> c = admin.groups().committedOffsets(GROUP);
            if (ledger.committed(c, from)) {
                // The coordinator journals every backwards commit: who sent it, old and new offset.
                System.out.println("GROUP_COMMIT_BACKWARDS read " + c + ", offset history: "
                        + admin.groups().offsetHistory(GROUP, 20));
            }
            return c;
        } catch (RuntimeException e) {
            return null; // coordinator moving or cut: the next read tells
        }
    }

    /** What the members ask of the group (thread-safe: AdminGroups is). */
    private final class MemberView implements GroupMember.Group {
        @Override
        public Boolean listed(String memberId) {
            DescribedGroup g = describe();
            if (g == null) {
                return null;
            }
            for (DescribedMember m : g.members()) {
                if (m.memberId().equals(memberId)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public Map<TopicPartition, Long> committed(String from) {
            return GroupWorkload.this.committed(from);
        }
    }

    private DescribedGroup describe() {
        try {
            DescribedGroup g = admin.groups().describeGroup(GROUP);
            return g.errorCode() == 0 ? g : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    enum Action {
        JOIN(2),
        LEAVE(2),
        CRASH(2),
        PAUSE(3),
        NONE(1);

        final int weight;

        Action(int weight) {
            this.weight = weight;
        }

        static Action pick(Random r) {
            int total = 0;
            for (Action a : values()) {
                total += a.weight;
            }
            int x = r.nextInt(total);
            for (Action a : values()) {
                x -= a.weight;
                if (x < 0) {
                    return a;
                }
            }
            throw new AssertionError();
        }
    }

    /**
     * Starts this round's membership change, chosen by {@code r} (its own random stream, so the
     * broker fault of a seed stays the same with or without the group load); runs beside the fault.
     *
     * @return what was started, for the round's line
     */
    String act(Random r) {
        Action a = Action.pick(r);
        if (a == Action.JOIN && live.size() >= MAX_MEMBERS) {
            a = Action.PAUSE;
        }
        if (a != Action.JOIN && a != Action.NONE && live.size() <= MIN_MEMBERS) {
            a = Action.JOIN;
        }
        actionCounts.merge(a.name(), 1, Integer::sum);
        switch (a) {
            case NONE -> action = CompletableFuture.completedFuture("none");
            case JOIN -> action = CompletableFuture.completedFuture(join().name + " joined");
            case LEAVE, CRASH -> {
                GroupMember m = live.remove(r.nextInt(live.size()));
                gone.add(m);
                action = m.command(a == Action.LEAVE ? GroupMember.Command.LEAVE : GroupMember.Command.CRASH);
            }
            case PAUSE -> {
                List<GroupMember> owners = new ArrayList<>();
                for (GroupMember m : live) {
                    if (!m.owned().isEmpty()) {
                        owners.add(m);
                    }
                }
                List<GroupMember> from = owners.isEmpty() ? live : owners;
                GroupMember m = from.get(r.nextInt(from.size()));
                live.remove(m);
                paused.add(m);
                action = m.command(GroupMember.Command.PAUSE);
            }
        }
        return a.name();
    }

    /**
     * With the round's fault healed: waits for the membership change, then for the steady state,
     * then for the committed offsets to pass what was acknowledged, and checks the deliveries.
     *
     * @return what happened and how long each phase took, for the round's line
     */
    String settle() throws InterruptedException {
        Ledger l = ledger.ledger();
        long t0 = System.nanoTime();
        String what;
        try {
            what = action.get(GroupMember.COORDINATOR_TIMEOUT_MS + 60_000, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            l.violation("GROUP_ACTION_STUCK", -1, "the round's member action did not end: " + e);
            what = "stuck";
        }
        live.addAll(paused); // a paused member polls again once its check is done
        paused.clear();
        long t1 = System.nanoTime();
        String[] last = {""};
        if (FaultCluster.poll(30_000, () -> (last[0] = steady()).isEmpty())) {
            ledger.steadyChecks.incrementAndGet();
        } else {
            l.violation("GROUP_NOT_STEADY", -1, "30 s after the round healed: " + last[0]);
        }
        long t2 = System.nanoTime();
        for (int p = 0; p < partitions; p++) {
            int partition = p;
            long target = l.maxAckedOffset(p) + 1;
            if (!FaultCluster.poll(20_000, () -> ledger.maxCommitted(partition) >= target)) {
                l.violation(
                        "GROUP_COMMIT_STUCK",
                        p,
                        "acknowledged offsets up to " + (target - 1) + " but the group's committed offset is "
                                + ledger.maxCommitted(p) + " 20 s later");
            }
            ledger.verifyDelivered(p, ledger.maxCommitted(p));
        }
        long t3 = System.nanoTime();
        action = CompletableFuture.completedFuture("none");
        return what + "; group: action " + (t1 - t0) / 1_000_000 + " ms, steady " + (t2 - t1) / 1_000_000
                + " ms, committed " + (t3 - t2) / 1_000_000 + " ms";
    }

    /** Waits until the group is in its steady state (before the first round). */
    void awaitSteady(long timeoutMs) throws InterruptedException {
        String[] last = {""};
        if (!FaultCluster.poll(timeoutMs, () -> (last[0] = steady()).isEmpty())) {
            throw new AssertionError("group not steady " + timeoutMs + " ms after it started: " + last[0]);
        }
    }

    /** Empty when the group is in its steady state, else why not. */
    private String steady() {
        DescribedGroup g = describe();
        if (g == null) {
            return "DescribeGroups failed";
        }
        if (!g.state().equals(DescribeGroupsResponse.STATE_STABLE)) {
            return "state " + g.state() + " " + describeMembers(g);
        }
        Map<String, GroupMember> byId = new HashMap<>();
        for (GroupMember m : live) {
            String id = m.memberId();
            if (id == null) {
                return m.name + " has no member id yet";
            }
            byId.put(id, m);
        }
        if (g.members().size() != live.size()) {
            return live.size() + " live members but " + describeMembers(g);
        }
        Set<Integer> owned = new HashSet<>();
        for (DescribedMember d : g.members()) {
            GroupMember m = byId.get(d.memberId());
            if (m == null) {
                return "member " + d.memberId() + " is none of the live ones: " + describeMembers(g);
            }
            if (!d.pendingRevocation().isEmpty()) {
                return m.name + " still revoking: " + describeMembers(g);
            }
            Set<Integer> assigned = partitionsOf(d.assignment());
            Set<Integer> seen = new TreeSet<>();
            m.owned().forEach(tp -> seen.add(tp.partition()));
            if (!assigned.equals(seen)) {
                return m.name + " was told it owns " + seen + ", the coordinator says " + assigned;
            }
            for (int p : assigned) {
                if (!owned.add(p)) {
                    return "partition " + p + " owned twice: " + describeMembers(g);
                }
            }
        }
        if (owned.size() != partitions) {
            return "owned partitions " + owned + " of " + partitions + ": " + describeMembers(g);
        }
        return "";
    }

    private Set<Integer> partitionsOf(List<TopicPartitions> tps) {
        Set<Integer> out = new TreeSet<>();
        for (TopicPartitions t : tps) {
            if (t.topic().equals(topic)) {
                out.addAll(t.partitions());
            }
        }
        return out;
    }

    private static String describeMembers(DescribedGroup g) {
        StringBuilder sb = new StringBuilder("epoch " + g.groupEpoch() + " members [");
        for (DescribedMember d : g.members()) {
            sb.append(' ')
                    .append(d.memberId())
                    .append("@")
                    .append(d.memberEpoch())
                    .append(d.assignment())
                    .append(d.pendingRevocation().isEmpty() ? "" : " revoking " + d.pendingRevocation());
        }
        return sb.append(" ]").toString();
    }

    /** Actions taken and the ledger's counters, for the run's last line. */
    String summary() {
        return "actions=" + new java.util.TreeMap<>(actionCounts) + " members=" + nextMember + " " + ledger.summary();
    }

    @Override
    public void close() throws InterruptedException {
        polling = false;
        if (poller != null) {
            poller.join(10_000);
        }
        List<GroupMember> all = new ArrayList<>(live);
        all.addAll(paused);
        all.addAll(gone);
        for (GroupMember m : all) {
            m.close();
        }
        admin.close();
    }
}
