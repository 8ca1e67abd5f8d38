package io.stellflow.perf.groups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link GroupBench} against an in-memory group ({@link FakeGroup}) that hands out a new balanced
 * assignment a fixed delay after each membership change, so that the measured rebalance times can
 * be checked against a known floor.
 */
class GroupBenchTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long ASSIGN_DELAY_MS = 80;

    @Test
    void rebalanceTimesEachPhaseFromItsStartToTheStableCover() throws Exception {
        FakeGroup group = new FakeGroup(30, ASSIGN_DELAY_MS);
        List<JsonNode> lines = run(group, "rebalance", "--members", "3", "--settle-ms", "50", "--poll-ms", "5");

        assertThat(lines)
                .extracting(n -> n.get("name").asText())
                .containsExactly("rb-join", "rb-join-one", "rb-leave-one");
        for (JsonNode n : lines) {
            assertThat(n.get("errors").asLong()).isZero();
            assertThat(n.get("records").asLong()).isEqualTo(30);
            // The fake assigns ASSIGN_DELAY_MS after the change; polls every 5 ms, settles 50 ms,
            // which the measured time must not include.
            assertThat(n.get("rebalance_ms").asDouble())
                    .isBetween((double) ASSIGN_DELAY_MS - 1, ASSIGN_DELAY_MS + 400.0);
        }
        assertThat(lines.get(0).get("members").asInt()).isEqualTo(3);
        assertThat(lines.get(1).get("members").asInt()).isEqualTo(4);
        assertThat(lines.get(2).get("members").asInt()).isEqualTo(3);
    }

    @Test
    void aGroupThatNeverBalancesTimesOutWithAnError() throws Exception {
        FakeGroup group = new FakeGroup(30, ASSIGN_DELAY_MS);
        group.giveEverythingToTheFirst = true;
        List<JsonNode> lines = run(group, "rebalance", "--members", "2", "--settle-ms", "20", "--timeout-ms", "150");

        assertThat(lines.get(0).get("errors").asLong()).isEqualTo(1);
        assertThat(lines.get(0).get("detail").asText()).contains("timed out").contains("members outside 15..15");
    }

    @Test
    void commitCountsOnlyTheRecordedWindowAndReportsLatency() throws Exception {
        FakeGroup group = new FakeGroup(4, 10);
        List<JsonNode> lines = run(
                group, "commit", "--members", "4", "--settle-ms", "20", "--warmup-ms", "50", "--duration-ms", "200");

        JsonNode n = lines.get(0);
        assertThat(n.get("errors").asLong()).isZero();
        assertThat(n.get("records").asLong()).isPositive().isLessThan(group.commits.get());
        assertThat(n.get("records_per_s").asDouble()).isPositive();
        assertThat(n.get("p99_ms").asDouble())
                .isGreaterThanOrEqualTo(n.get("p50_ms").asDouble());
        assertThat(n.get("elapsed_ms").asLong()).isBetween(200L, 500L);
    }

    @Test
    void refusedCommitsAreCountedAsErrors() throws Exception {
        FakeGroup group = new FakeGroup(2, 10);
        group.refuseCommits = true;
        List<JsonNode> lines =
                run(group, "commit", "--members", "2", "--settle-ms", "20", "--warmup-ms", "0", "--duration-ms", "100");

        assertThat(lines.get(0).get("errors").asLong()).isPositive();
        assertThat(lines.get(0).get("records").asLong()).isZero();
    }

    @Test
    void consumeCountsTheRecordsAfterTheFirstPoll() throws Exception {
        FakeGroup group = new FakeGroup(4, 10);
        List<JsonNode> lines = run(group, "consume", "--mode", "assign", "--num-records", "1000");

        JsonNode n = lines.get(0);
        assertThat(n.get("errors").asLong()).isZero();
        assertThat(n.get("records_read").asLong()).isEqualTo(1000);
        // The fake returns 100 records of 64 bytes per poll: the first poll is not counted.
        assertThat(n.get("records").asLong()).isEqualTo(900);
        assertThat(n.get("bytes").asLong()).isEqualTo(900 * 64);
        assertThat(n.get("mode").asText()).isEqualTo("assign");
    }

    @Test
    void consumeThatEndsShortIsAnError() throws Exception {
        FakeGroup group = new FakeGroup(4, 10);
        group.recordsAvailable = 300;
        List<JsonNode> lines = run(group, "consume", "--mode", "group", "--num-records", "1000", "--timeout-ms", "300");

        assertThat(lines.get(0).get("errors").asLong()).isEqualTo(1);
        assertThat(lines.get(0).get("records_read").asLong()).isEqualTo(300);
    }

    @Test
    void badOptionsAreRefusedWithTheirName() {
        FakeGroup group = new FakeGroup(4, 10);
        assertThatThrownBy(() -> run(group, "rebalance", "--members", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--members");
        assertThatThrownBy(() -> GroupBench.run(new String[] {"rebalance", "--topic", "t"}, group::client))
                .hasMessageContaining("--bootstrap-server");
        assertThatThrownBy(() -> run(group, "consume", "--mode", "other", "--num-records", "1"))
                .hasMessageContaining("--mode");
        assertThatThrownBy(() -> run(group, "shuffle")).hasMessageContaining("unknown case shuffle");
    }

    private static List<JsonNode> run(FakeGroup group, String scenario, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                scenario,
                "--bootstrap-server",
                "fake:1",
                "--topic",
                "t",
                "--name",
                "rb",
                "--partitions",
                Integer.toString(group.partitions)));
        args.addAll(List.of(more));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            GroupBench.run(args.toArray(String[]::new), group::client, out);
        }
        List<JsonNode> lines = new ArrayList<>();
        for (String line : bytes.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                lines.add(JSON.readTree(line));
            }
        }
        return lines;
    }

    /**
     * A group of one topic: after each join or leave, and {@code assignDelayMs} later, each member
     * gets the partitions {@code i} with {@code i % members == its rank} at its next poll (revocations
     * first, as both real protocols order them).
     */
    static final class FakeGroup {
        final int partitions;
        final long assignDelayMs;
        final java.util.concurrent.atomic.AtomicLong commits = new java.util.concurrent.atomic.AtomicLong();
        volatile boolean giveEverythingToTheFirst;
        volatile boolean refuseCommits;
        volatile long recordsAvailable = Long.MAX_VALUE;
        private final List<FakeClient> members = new ArrayList<>();
        private long changedNs;

        FakeGroup(int partitions, long assignDelayMs) {
            this.partitions = partitions;
            this.assignDelayMs = assignDelayMs;
        }

        GroupClient client(String bootstrap, String groupId, String clientId, Map<String, String> props) {
            return new FakeClient(this);
        }

        synchronized void join(FakeClient c) {
            members.add(c);
            changedNs = System.nanoTime();
        }

        synchronized void leave(FakeClient c) {
            members.remove(c);
            changedNs = System.nanoTime();
        }

        /** The member's target, or null while the delay after the last change runs. */
        synchronized Set<Integer> target(FakeClient c) {
            if (System.nanoTime() - changedNs < TimeUnit.MILLISECONDS.toNanos(assignDelayMs)) {
                return null;
            }
            int rank = members.indexOf(c);
            Set<Integer> out = new HashSet<>();
            for (int p = 0; p < partitions; p++) {
                boolean mine = giveEverythingToTheFirst ? rank == 0 : p % members.size() == rank;
                if (mine) {
                    out.add(p);
                }
            }
            return out;
        }
    }

    static final class FakeClient implements GroupClient {
        private final FakeGroup group;
        private Listener listener;
        private final Set<Integer> owned = new HashSet<>();
        private long read;
        private long valueBytes;

        FakeClient(FakeGroup group) {
            this.group = group;
        }

        @Override
        public void subscribe(String topic, Listener l) {
            listener = l;
            group.join(this);
        }

        @Override
        public void assign(String topic, int partitions) {}

        @Override
        public int poll(long timeoutMs) {
            if (listener != null) {
                Set<Integer> target = group.target(this);
                if (target != null && !target.equals(owned)) {
                    List<Integer> revoked = new ArrayList<>(owned);
                    revoked.removeAll(target);
                    if (!revoked.isEmpty()) {
                        owned.removeAll(revoked);
                        listener.revoked(revoked);
                    }
                    List<Integer> added = new ArrayList<>(target);
                    added.removeAll(owned);
                    owned.addAll(added);
                    listener.assigned(added);
                }
            }
            int n = (int) Math.min(100, group.recordsAvailable - read);
            if (n <= 0) {
                sleep(timeoutMs);
                return 0;
            }
            read += n;
            valueBytes += n * 64L;
            sleep(1);
            return n;
        }

        @Override
        public long valueBytes() {
            return valueBytes;
        }

        @Override
        public boolean commitSync(String topic, int partition, long offset) {
            sleep(1);
            group.commits.incrementAndGet();
            return !group.refuseCommits && owned.contains(partition);
        }

        @Override
        public void close() {
            if (listener != null && !owned.isEmpty()) {
                listener.revoked(new ArrayList<>(owned));
                owned.clear();
            }
            group.leave(this);
        }

        private static void sleep(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
