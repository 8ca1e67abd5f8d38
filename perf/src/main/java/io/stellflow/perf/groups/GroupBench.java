package io.stellflow.perf.groups;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * The consumer-group cases of the perf lab, run the same way against any system through its {@link
 * GroupClient} adapter. Each case prints one JSON object per line on stdout in the load generator's
 * {@code --json} shape ({@code name, records, bytes, elapsed_ms, mb_per_s, records_per_s, p50_ms,
 * p99_ms, p999_ms, max_ms, errors}, latencies -1 when not measured) plus case fields, which {@code
 * perf/lab-groups.sh} hands to {@code LabCommand add}. Diagnostics go to stderr.
 *
 * <ul>
 *   <li>{@code rebalance --members M --partitions P}: M members subscribe to a topic of P
 *       partitions; three lines: {@code <name>-join} (from the instant just before the last member
 *       calls subscribe), {@code <name>-join-one} (one more member: from just before its subscribe)
 *       and {@code <name>-leave-one} (the first member closes, leaving the group: from just before
 *       its close), each until the {@link StableCover} predicate holds over the live members' listener
 *       state; {@code elapsed_ms} is the time, {@code records} the partitions. The end instant is the
 *       last listener call that completed the cover, confirmed by {@code --settle-ms} without change.
 *   <li>{@code commit --members N --partitions N}: N members join (untimed, until stable), then each
 *       commits its own partitions in a loop, one synchronous commit of one partition at a time, with
 *       a {@code poll(0)} at least every 50 ms; {@code --warmup-ms} unrecorded, then {@code
 *       --duration-ms} recorded: commits/s over all members and the latency of each commitSync call
 *       (HdrHistogram, microseconds).
 *   <li>{@code consume --mode group|assign --num-records R --partitions P}: one consumer reads R
 *       records from the earliest offset, with {@code subscribe} (a fresh group) or {@code assign} (no
 *       group); MB/s of record values from the end of the first poll that returned records to the last
 *       record, counting the records after that first poll ({@code start_to_first_ms}: from the
 *       subscribe or assign call to that first poll's end, join included).
 * </ul>
 *
 * <p>Not thread-safe; one case per instance, driven from the calling thread.
 */
public final class GroupBench {
    private final GroupClient.Factory factory;
    private final Map<String, String> opts;
    private final Map<String, String> clientProps;
    private final PrintStream out;
    private final String bootstrap;
    private final String topic;
    private final String name;
    private final String group;
    private final int partitions;
    private final long pollMs;
    private final long settleMs;
    private final long timeoutMs;

    GroupBench(
            GroupClient.Factory factory, Map<String, String> opts, Map<String, String> clientProps, PrintStream out) {
        this.factory = factory;
        this.opts = opts;
        this.clientProps = clientProps;
        this.out = out;
        this.bootstrap = required("bootstrap-server");
        this.topic = required("topic");
        this.partitions = intOpt("partitions", -1);
        if (partitions <= 0) {
            throw new IllegalArgumentException("--partitions must be > 0, got " + opts.get("partitions"));
        }
        this.name = opts.getOrDefault("name", topic);
        this.group = opts.getOrDefault("group", "bench-" + name + "-" + Long.toHexString(System.nanoTime()));
        this.pollMs = intOpt("poll-ms", 20);
        this.settleMs = intOpt("settle-ms", 1000);
        this.timeoutMs = intOpt("timeout-ms", 180_000);
    }

    /**
     * Runs the case named by {@code args[0]} ({@code rebalance}, {@code commit} or {@code consume})
     * with {@code --key value} options; {@code --prop k=v} (repeatable) adds a consumer property.
     * Each system's adapter calls this from its {@code main}.
     *
     * @return 0 when every line of the case has no error, 1 otherwise
     * @throws IllegalArgumentException on a missing or malformed option
     */
    public static int run(String[] args, GroupClient.Factory factory) throws InterruptedException {
        return run(args, factory, System.out);
    }

    static int run(String[] args, GroupClient.Factory factory, PrintStream out) throws InterruptedException {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: rebalance|commit|consume --bootstrap-server H:P --topic T"
                    + " --partitions P [--members M] [--name N] [--group G] [--prop k=v ...] (see GroupBench javadoc)");
        }
        Map<String, String> opts = new LinkedHashMap<>();
        Map<String, String> props = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --key value, got " + args[i]);
            }
            String key = args[i].substring(2);
            if (key.equals("prop")) {
                String[] kv = args[i + 1].split("=", 2);
                if (kv.length != 2) {
                    throw new IllegalArgumentException("--prop wants k=v, got " + args[i + 1]);
                }
                props.put(kv[0], kv[1]);
            } else {
                opts.put(key, args[i + 1]);
            }
        }
        GroupBench bench = new GroupBench(factory, opts, props, out);
        return switch (args[0]) {
            case "rebalance" -> bench.rebalance();
            case "commit" -> bench.commit();
            case "consume" -> bench.consume();
            default -> throw new IllegalArgumentException("unknown case " + args[0]);
        };
    }

    // --- rebalance ------------------------------------------------------------------------------

    int rebalance() throws InterruptedException {
        int members = intOpt("members", -1);
        if (members <= 0) {
            throw new IllegalArgumentException("--members must be > 0");
        }
        List<GroupMember> live = startMembers(members);
        int errors = 0;
        try {
            long t0 = 0;
            for (GroupMember m : live) {
                t0 = Math.max(t0, m.subscribeNs());
            }
            errors += report(name + "-join", live, t0);

            GroupMember extra = newMember(members, new CountDownLatch(0));
            extra.start();
            live.add(extra);
            if (!extra.awaitSubscribed(timeoutMs) || extra.failure() != null) {
                throw new IllegalStateException("the extra member did not subscribe", extra.failure());
            }
            errors += report(name + "-join-one", live, extra.subscribeNs());

            GroupMember leaving = live.remove(0);
            leaving.leave();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (leaving.closeNs() < 0 && leaving.failure() == null && System.nanoTime() < deadline) {
                Thread.sleep(0, 100_000);
            }
            if (leaving.closeNs() < 0) {
                throw new IllegalStateException("the leaving member did not reach close", leaving.failure());
            }
            errors += report(name + "-leave-one", live, leaving.closeNs());
            leaving.awaitExit(timeoutMs);
        } finally {
            stopAll(live);
        }
        return errors == 0 ? 0 : 1;
    }

    /** Times one phase from {@code t0Ns} and prints its line; returns its error count (0 or 1). */
    private int report(String lineName, List<GroupMember> live, long t0Ns) throws InterruptedException {
        Stable s = awaitStable(live, t0Ns);
        long ns = s.stableNs() - t0Ns;
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("members", live.size());
        extra.put("partitions", partitions);
        extra.put("rebalance_ms", s.stableNs() < 0 ? -1.0 : ns / 1e6);
        if (s.detail() != null) {
            extra.put("detail", s.detail());
        }
        long elapsedMs = s.stableNs() < 0 ? timeoutMs : ns / 1_000_000;
        out.println(line(lineName, partitions, 0, elapsedMs, 0, 0, null, s.stableNs() < 0 ? 1 : 0, extra));
        out.flush();
        return s.stableNs() < 0 ? 1 : 0;
    }

    /** stableNs -1 when the timeout passed first; detail says what was missing then. */
    private record Stable(long stableNs, String detail) {}

    private Stable awaitStable(List<GroupMember> live, long t0Ns) throws InterruptedException {
        long deadline = t0Ns + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        long settleNs = TimeUnit.MILLISECONDS.toNanos(settleMs);
        long candidate = -1;
        long candidateSeenNs = 0;
        String last = "not checked";
        while (true) {
            long now = System.nanoTime();
            List<Set<Integer>> owned = new ArrayList<>(live.size());
            long lastChangeNs = t0Ns;
            for (GroupMember m : live) {
                if (m.failure() != null) {
                    return new Stable(-1, "member failed: " + m.failure());
                }
                GroupMember.State st = m.state();
                owned.add(st.owned());
                lastChangeNs = Math.max(lastChangeNs, st.changedNs());
            }
            last = StableCover.check(owned, partitions);
            if (last == null) {
                if (lastChangeNs != candidate) {
                    candidate = lastChangeNs;
                    candidateSeenNs = now;
                } else if (now - candidateSeenNs >= settleNs) {
                    return new Stable(candidate, null);
                }
            } else {
                candidate = -1;
            }
            if (now > deadline) {
                return new Stable(-1, "timed out: " + last);
            }
            Thread.sleep(1);
        }
    }

    private List<GroupMember> startMembers(int count) throws InterruptedException {
        CountDownLatch gate = new CountDownLatch(1);
        List<GroupMember> members = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            members.add(newMember(i, gate));
        }
        members.forEach(GroupMember::start);
        for (GroupMember m : members) {
            if (!m.awaitReady(timeoutMs) || m.failure() != null) {
                stopAll(members);
                throw new IllegalStateException("a member's client could not be built", m.failure());
            }
        }
        gate.countDown();
        for (GroupMember m : members) {
            if (!m.awaitSubscribed(timeoutMs) || m.failure() != null) {
                stopAll(members);
                throw new IllegalStateException("a member did not subscribe", m.failure());
            }
        }
        return members;
    }

    private GroupMember newMember(int index, CountDownLatch gate) {
        String clientId = name + "-m" + index;
        return new GroupMember(
                clientId, topic, pollMs, () -> factory.create(bootstrap, group, clientId, clientProps), gate);
    }

    private void stopAll(List<GroupMember> members) throws InterruptedException {
        members.forEach(GroupMember::stop);
        for (GroupMember m : members) {
            if (!m.awaitExit(timeoutMs)) {
                System.err.println("group-bench: a member did not stop within " + timeoutMs + " ms");
            }
        }
    }

    // --- commit ---------------------------------------------------------------------------------

    int commit() throws InterruptedException {
        int members = intOpt("members", -1);
        long warmupMs = intOpt("warmup-ms", 2000);
        long durationMs = intOpt("duration-ms", 10_000);
        if (members <= 0 || durationMs <= 0 || warmupMs < 0) {
            throw new IllegalArgumentException("--members and --duration-ms must be > 0, --warmup-ms >= 0");
        }
        List<GroupMember> live = startMembers(members);
        Histogram latencyUs = new Histogram(TimeUnit.HOURS.toMicros(1), 3);
        long commits = 0;
        long errors = 0;
        long recordedNs;
        try {
            Stable s = awaitStable(
                    live,
                    live.stream().mapToLong(GroupMember::subscribeNs).max().orElseThrow());
            if (s.stableNs() < 0) {
                throw new IllegalStateException("the committers' group did not become stable: " + s.detail());
            }
            live.forEach(m -> m.committing(true));
            Thread.sleep(warmupMs);
            long start = System.nanoTime();
            live.forEach(m -> m.recording(true));
            Thread.sleep(durationMs);
            live.forEach(m -> m.recording(false));
            recordedNs = System.nanoTime() - start;
        } finally {
            stopAll(live);
        }
        for (GroupMember m : live) {
            if (m.failure() != null) {
                throw new IllegalStateException("a committer failed", m.failure());
            }
            latencyUs.add(m.commitLatencyUs());
            commits += m.commits();
            errors += m.commitErrors();
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("members", members);
        extra.put("partitions", partitions);
        out.println(line(
                name, commits, 0, recordedNs / 1_000_000, 0, commits / (recordedNs / 1e9), latencyUs, errors, extra));
        out.flush();
        return commits > 0 && errors == 0 ? 0 : 1;
    }

    // --- consume --------------------------------------------------------------------------------

    int consume() {
        String mode = opts.getOrDefault("mode", "group");
        long numRecords = Long.parseLong(required("num-records"));
        boolean grouped = switch (mode) {
            case "group" -> true;
            case "assign" -> false;
            default -> throw new IllegalArgumentException("--mode must be group or assign, got " + mode);
        };
        long records = 0;
        long firstNs = -1;
        long firstBytes = 0;
        long firstRecords = 0;
        long lastNs = -1;
        long bytes;
        long startNs = System.nanoTime();
        long deadline = startNs + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        try (GroupClient c = factory.create(bootstrap, grouped ? group : null, name, clientProps)) {
            startNs = System.nanoTime();
            if (grouped) {
                c.subscribe(topic, new GroupClient.Listener() {
                    @Override
                    public void revoked(java.util.Collection<Integer> partitions) {}

                    @Override
                    public void assigned(java.util.Collection<Integer> partitions) {}
                });
            } else {
                c.assign(topic, partitions);
            }
            while (records < numRecords && System.nanoTime() < deadline) {
                int n = c.poll(100);
                if (n > 0) {
                    records += n;
                    lastNs = System.nanoTime();
                    if (firstNs < 0) {
                        firstNs = lastNs;
                        firstRecords = records;
                        firstBytes = c.valueBytes();
                    }
                }
            }
            bytes = c.valueBytes();
        }
        long measured = records - firstRecords;
        long measuredBytes = bytes - firstBytes;
        long ns = Math.max(lastNs - firstNs, 1);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("mode", mode);
        extra.put("partitions", partitions);
        extra.put("records_read", records);
        extra.put("start_to_first_ms", firstNs < 0 ? -1.0 : (firstNs - startNs) / 1e6);
        long errors = records < numRecords ? 1 : 0;
        out.println(line(
                name,
                measured,
                measuredBytes,
                ns / 1_000_000,
                measuredBytes / (1024.0 * 1024.0) / (ns / 1e9),
                measured / (ns / 1e9),
                null,
                errors,
                extra));
        out.flush();
        return errors == 0 && measured > 0 ? 0 : 1;
    }

    // --- helpers --------------------------------------------------------------------------------

    /**
     * One result line in the load generator's {@code --json} shape, {@code extra} appended as fields
     * (numbers, strings); {@code latencyUs} (microseconds) null: latencies -1 (not measured). Also
     * used by {@code io.stellflow.perf.txn.TxnBench}. Stateless.
     */
    public static String line(
            String name,
            long records,
            long bytes,
            long elapsedMs,
            double mbPerS,
            double recordsPerS,
            Histogram latencyUs,
            long errors,
            Map<String, Object> extra) {
        StringBuilder sb = new StringBuilder(256).append('{');
        field(sb, "name", name);
        field(sb, "records", records);
        field(sb, "bytes", bytes);
        field(sb, "elapsed_ms", elapsedMs);
        field(sb, "mb_per_s", round(mbPerS));
        field(sb, "records_per_s", round(recordsPerS));
        boolean none = latencyUs == null || latencyUs.getTotalCount() == 0;
        field(sb, "p50_ms", none ? -1.0 : round(latencyUs.getValueAtPercentile(50) / 1000.0));
        field(sb, "p99_ms", none ? -1.0 : round(latencyUs.getValueAtPercentile(99) / 1000.0));
        field(sb, "p999_ms", none ? -1.0 : round(latencyUs.getValueAtPercentile(99.9) / 1000.0));
        field(sb, "max_ms", none ? -1.0 : round(latencyUs.getMaxValue() / 1000.0));
        field(sb, "errors", errors);
        extra.forEach((k, v) -> field(sb, k, v instanceof Double d ? round(d) : v));
        sb.setLength(sb.length() - 1);
        return sb.append('}').toString();
    }

    private static void field(StringBuilder sb, String key, Object value) {
        sb.append('"').append(key).append("\":");
        if (value instanceof String s) {
            sb.append('"');
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20) {
                    sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        } else {
            sb.append(value);
        }
        sb.append(',');
    }

    private static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }

    private String required(String key) {
        String v = opts.get(key);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("--" + key + " is required");
        }
        return v;
    }

    private int intOpt(String key, int dflt) {
        String v = opts.get(key);
        try {
            return v == null ? dflt : Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + key + " wants an integer, got " + v, e);
        }
    }
}
