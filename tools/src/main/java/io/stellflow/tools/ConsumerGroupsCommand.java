package io.stellflow.tools;

import io.stellflow.client.GroupLag;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.WireWriter;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-consumer-groups.sh}, with Kafka's flags: {@code --list}; {@code --describe --group
 * G} (the offsets view by default or with {@code --offsets}; {@code --members}, {@code --state}, and
 * {@code --history} for the journal of offset changes, OffsetHistory); {@code --reset-offsets --group G
 * (--topic T[:p,...] | --all-topics) (--to-earliest | --to-latest | --to-offset N | --to-datetime D |
 * --by-duration P | --shift-by N) [--execute]} (a dry run by default, refused while the group has
 * active members; {@link OffsetResetPlanner}); {@code --delete --group G}; {@code --delete-offsets
 * --group G --topic T[:p,...]}.
 *
 * <p>Exit status: 0 success; 1 the cluster refused or could not be reached, an unknown group, a topic
 * without partitions, a refused reset, a partition that failed; 2 bad arguments (conflicting or
 * missing flags, bad values: nothing is sent). Errors are one line on stderr starting with {@code
 * error:} that names what to do. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-consumer-groups",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "List, describe, reset the offsets of and delete consumer groups.")
public final class ConsumerGroupsCommand implements Callable<Integer> {
    /** Client defaults of the tool: fail within seconds when nothing answers (issue #22). */
    static final Map<String, String> TOOL_CLIENT_DEFAULTS = Map.of(
            "retries", "5", // back-offs 100+200+400+800+1000 ms: 2.5 s at most per lookup
            "socket.connection.setup.timeout.ms", "5000",
            "request.timeout.ms", "15000",
            "client.id", "stellflow-consumer-groups");

    /** Journal entries shown by {@code --history} unless {@code --max-entries} says otherwise. */
    static final int DEFAULT_HISTORY_ENTRIES = 100;

    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            description = "host:port[,host:port...] of brokers")
    String bootstrapServer;

    @Option(names = "--command-config", description = "properties file of admin client settings")
    Path commandConfig;

    @Option(names = "--command-property", description = "admin client property k=v (repeatable)")
    Map<String, String> commandProperties;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Action action;

    static final class Action {
        @Option(names = "--list", description = "list every group")
        boolean list;

        @Option(names = "--describe", description = "describe --group (repeatable)")
        boolean describe;

        @Option(names = "--reset-offsets", description = "reset the offsets of --group (a dry run without --execute)")
        boolean resetOffsets;

        @Option(names = "--delete", description = "delete --group (repeatable) and its offsets")
        boolean delete;

        @Option(names = "--delete-offsets", description = "delete the offsets of --group for --topic")
        boolean deleteOffsets;
    }

    @Option(names = "--group", description = "group id (repeatable for --describe and --delete)")
    List<String> groups = new ArrayList<>();

    @Option(names = "--topic", description = "T or T:p,p,... (repeatable) for --reset-offsets and --delete-offsets")
    List<String> topics = new ArrayList<>();

    @Option(names = "--all-topics", description = "--reset-offsets: every topic the group has offsets for")
    boolean allTopics;

    @Option(names = "--offsets", description = "--describe: offsets and lag per partition (the default)")
    boolean offsetsView;

    @Option(names = "--members", description = "--describe: the members and their assignments")
    boolean membersView;

    @Option(names = "--state", description = "--list: with protocol and state; --describe: the group's state")
    boolean stateView;

    @Option(names = "--history", description = "--describe: the journal of offset changes")
    boolean historyView;

    @Option(names = "--max-entries", description = "--history: newest entries shown (default 100)")
    Integer maxEntries;

    @Option(names = "--to-earliest", description = "reset to the log start")
    boolean toEarliest;

    @Option(names = "--to-latest", description = "reset to the log end")
    boolean toLatest;

    @Option(names = "--to-offset", description = "reset to this offset (clamped into the log)")
    Long toOffset;

    @Option(
            names = "--to-datetime",
            description = "reset to the first record at or after YYYY-MM-DDTHH:mm:SS.sss (local time, or with Z"
                    + " or +hh:mm)")
    String toDatetime;

    @Option(names = "--by-duration", description = "reset to the first record at or after now minus PnDTnHnMnS")
    String byDuration;

    @Option(names = "--shift-by", description = "move the committed offset by N (negative: back)")
    Long shiftBy;

    @Option(names = "--dry-run", description = "print the reset plan only (the default)")
    boolean dryRun;

    @Option(names = "--execute", description = "apply the reset plan")
    boolean execute;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** Builds the admin from the client properties; tests give a fake. */
    Function<Properties, GroupAdmin> adminFactory = ClientGroupAdmin::new;

    /** "now" of {@code --by-duration}. */
    Clock clock = Clock.systemUTC();

    /** The zone of a {@code --to-datetime} without an offset (Kafka's tool: the local zone). */
    ZoneId zone = ZoneId.systemDefault();

    @Override
    public Integer call() {
        validate();
        OffsetResetPlanner.Target target = action.resetOffsets ? resetTarget() : null;
        Properties props = clientProperties();
        PrintWriter out = spec.commandLine().getOut();
        try (GroupAdmin admin = adminFactory.apply(props)) {
            int rc;
            if (action.list) {
                GroupReports.list(admin.listGroups(), stateView, out);
                rc = 0;
            } else if (action.describe) {
                rc = 0;
                for (String g : groups) {
                    rc = Math.max(rc, describe(admin, g, out));
                }
            } else if (action.resetOffsets) {
                rc = reset(admin, groups.get(0), target, out);
            } else if (action.delete) {
                rc = 0;
                for (String g : groups) {
                    rc = Math.max(rc, delete(admin, g, out));
                }
            } else {
                rc = deleteOffsets(admin, groups.get(0), out);
            }
            out.flush();
            return rc;
        } catch (StellflowException e) {
            out.flush();
            return fail(explain(e));
        }
    }

    // ---- the actions

    private int describe(GroupAdmin admin, String groupId, PrintWriter out) {
        if (historyView) {
            try {
                GroupReports.history(
                        groupId,
                        admin.offsetHistory(groupId, maxEntries == null ? DEFAULT_HISTORY_ENTRIES : maxEntries),
                        out);
                return 0;
            } catch (StellflowException e) {
                if (e.errorCode() == Errors.GROUP_ID_NOT_FOUND) {
                    return fail(noSuchGroup(groupId));
                }
                throw e;
            }
        }
        if (!membersView && !stateView) {
            GroupLag lag = admin.describeLag(groupId);
            if (lag.group().errorCode() == Errors.GROUP_ID_NOT_FOUND
                    && lag.partitions().isEmpty()) {
                return fail(noSuchGroup(groupId));
            }
            if (lag.group().members().isEmpty()) {
                out.println("Consumer group '" + groupId + "' has no active members.");
            }
            GroupReports.offsets(lag, out);
            return 0;
        }
        DescribedGroup g = admin.describeGroup(groupId);
        if (g.errorCode() == Errors.GROUP_ID_NOT_FOUND) {
            return fail(noSuchGroup(groupId));
        }
        if (stateView) {
            GroupReports.state(g, out);
        } else if (g.members().isEmpty()) {
            out.println("Consumer group '" + groupId + "' has no active members.");
        } else {
            GroupReports.members(g, out);
        }
        return 0;
    }

    private int reset(GroupAdmin admin, String groupId, OffsetResetPlanner.Target target, PrintWriter out) {
        DescribedGroup g = admin.describeGroup(groupId);
        if (g.errorCode() == Errors.NONE && GroupReports.active(g)) {
            return fail("cannot reset the offsets of group '" + groupId + "': it has "
                    + g.members().size()
                    + " active member(s) (state " + g.state() + "); stop its consumers first, then run this"
                    + " again (a reset needs an inactive group)");
        }
        Map<TopicPartition, Long> committed = admin.committedOffsets(groupId);
        List<TopicPartition> partitions;
        if (allTopics) {
            if (committed.isEmpty()) {
                return fail("group '" + groupId + "' has no committed offsets, so --all-topics names nothing;"
                        + " name the topics with --topic");
            }
            partitions = new ArrayList<>(committed.keySet());
        } else {
            partitions = resolveTopics(admin, Map.of());
            if (partitions == null) {
                return 1;
            }
        }
        List<OffsetResetPlanner.PlannedReset> plan;
        try {
            plan = OffsetResetPlanner.plan(admin, committed, partitions, target);
        } catch (IllegalArgumentException e) {
            return fail(e.getMessage() + "; nothing was changed");
        }
        GroupReports.plan(groupId, plan, out);
        if (!execute) {
            out.flush();
            spec.commandLine().getErr().println("Dry run: nothing was changed. Add --execute to apply this plan.");
            return 0;
        }
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        plan.forEach(p -> offsets.put(p.partition(), p.newOffset()));
        int failed = 0;
        for (Map.Entry<TopicPartition, Short> e :
                admin.commitOffsets(groupId, offsets).entrySet()) {
            if (e.getValue() != Errors.NONE) {
                failed++;
                spec.commandLine()
                        .getErr()
                        .println("error: reset of " + e.getKey() + " refused: " + Errors.name(e.getValue())
                                + (e.getValue() == Errors.UNKNOWN_MEMBER_ID
                                        ? " (the group has active members again; stop them and retry)"
                                        : ""));
            }
        }
        out.flush();
        if (failed > 0) {
            return fail(failed + " of " + plan.size() + " partition(s) of group '" + groupId
                    + "' were not reset; the others were");
        }
        out.println("Reset " + plan.size() + " partition(s) of group '" + groupId + "'; undo with the"
                + " CURRENT-OFFSET column (--to-offset per --topic T:p) or see --describe --history.");
        return 0;
    }

    private int delete(GroupAdmin admin, String groupId, PrintWriter out) {
        try {
            admin.deleteGroup(groupId);
        } catch (StellflowException e) {
            if (e.errorCode() == Errors.GROUP_ID_NOT_FOUND) {
                return fail(noSuchGroup(groupId));
            }
            if (e.errorCode() == Errors.NON_EMPTY_GROUP) {
                return fail("cannot delete group '" + groupId + "': it has active members; stop its consumers"
                        + " first (NON_EMPTY_GROUP)");
            }
            throw e;
        }
        out.println("Deleted consumer group '" + groupId + "' and its offsets.");
        return 0;
    }

    private int deleteOffsets(GroupAdmin admin, String groupId, PrintWriter out) {
        Map<TopicPartition, Long> committed = admin.committedOffsets(groupId);
        List<TopicPartition> partitions = resolveTopics(admin, committed);
        if (partitions == null) {
            return 1;
        }
        Map<TopicPartition, Short> codes;
        try {
            codes = admin.deleteOffsets(groupId, partitions);
        } catch (StellflowException e) {
            if (e.errorCode() == Errors.GROUP_ID_NOT_FOUND) {
                return fail(noSuchGroup(groupId));
            }
            throw e;
        }
        TextTable t = new TextTable("GROUP", "TOPIC", "PARTITION", "STATUS");
        int failed = 0;
        for (Map.Entry<TopicPartition, Short> e : codes.entrySet()) {
            short code = e.getValue();
            failed += code == Errors.NONE ? 0 : 1;
            t.row(
                    groupId,
                    e.getKey().topic(),
                    e.getKey().partition(),
                    code == Errors.NONE
                            ? "Successful"
                            : "Error: " + Errors.name(code)
                                    + (code == Errors.GROUP_SUBSCRIBED_TO_TOPIC
                                            ? " (a member of the group is assigned it)"
                                            : ""));
        }
        t.print(out);
        out.flush();
        return failed == 0 ? 0 : fail(failed + " partition(s) kept their offsets (see STATUS)");
    }

    /**
     * The partitions named by {@code --topic}: "T:p,..." as given (each checked against the topic's
     * partition count), "T" every partition of T. A topic the cluster does not have falls back to the
     * partitions of {@code committed} for it (offsets of a deleted topic can still be deleted).
     *
     * @return the partitions in order, or null after printing why there are none
     */
    private List<TopicPartition> resolveTopics(GroupAdmin admin, Map<TopicPartition, Long> committed) {
        Set<TopicPartition> out = new LinkedHashSet<>();
        for (TopicSpec t : topicSpecs()) {
            int count = admin.partitionCount(t.topic());
            if (count < 0) {
                List<TopicPartition> known = committed.keySet().stream()
                        .filter(tp -> tp.topic().equals(t.topic()))
                        .filter(tp -> t.partitions().isEmpty() || t.partitions().contains(tp.partition()))
                        .toList();
                if (known.isEmpty()) {
                    fail("topic '" + t.topic() + "' does not exist (it has no partitions); nothing was changed");
                    return null;
                }
                out.addAll(known);
                continue;
            }
            if (t.partitions().isEmpty()) {
                for (int p = 0; p < count; p++) {
                    out.add(new TopicPartition(t.topic(), p));
                }
                continue;
            }
            for (int p : t.partitions()) {
                if (p >= count) {
                    fail("topic '" + t.topic() + "' has no partition " + p + " (it has " + count + ": 0-" + (count - 1)
                            + "); nothing was changed");
                    return null;
                }
                out.add(new TopicPartition(t.topic(), p));
            }
        }
        return new ArrayList<>(out);
    }

    // ---- arguments

    /** A parsed {@code --topic}: the topic and its partitions (empty: all of them). */
    record TopicSpec(String topic, List<Integer> partitions) {}

    List<TopicSpec> topicSpecs() {
        List<TopicSpec> out = new ArrayList<>();
        for (String s : topics) {
            int colon = s.lastIndexOf(':');
            String name = colon < 0 ? s : s.substring(0, colon);
            if (name.isEmpty()) {
                throw bad("--topic '" + s + "' names no topic (T or T:p,p,...)");
            }
            List<Integer> parts = new ArrayList<>();
            if (colon >= 0) {
                for (String p : s.substring(colon + 1).split(",", -1)) {
                    try {
                        int n = Integer.parseInt(p.trim());
                        if (n < 0) {
                            throw new NumberFormatException();
                        }
                        parts.add(n);
                    } catch (NumberFormatException e) {
                        throw bad("--topic '" + s + "': '" + p + "' is not a partition number (T:0,1,2)");
                    }
                }
            }
            out.add(new TopicSpec(name, parts));
        }
        return out;
    }

    /** Checks the combination of flags; throws a ParameterException (exit 2) naming the conflict. */
    private void validate() {
        if (bootstrapServer == null || bootstrapServer.isBlank()) {
            throw bad("--bootstrap-server is required (host:port of a broker)");
        }
        String act = action.list
                ? "--list"
                : action.describe
                        ? "--describe"
                        : action.resetOffsets ? "--reset-offsets" : action.delete ? "--delete" : "--delete-offsets";
        if (action.list && !groups.isEmpty()) {
            throw bad("--list takes no --group (use --describe --group G)");
        }
        if (!action.list && groups.isEmpty()) {
            throw bad(act + " needs --group");
        }
        if ((action.resetOffsets || action.deleteOffsets) && groups.size() > 1) {
            throw bad(act + " takes one --group, got " + groups.size());
        }
        for (String g : groups) {
            if (g.isEmpty()) {
                throw bad("--group must not be empty");
            }
            int bytes = g.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > WireWriter.MAX_STRING_BYTES) {
                throw bad("--group is " + bytes + " UTF-8 bytes; a group id is at most " + WireWriter.MAX_STRING_BYTES);
            }
        }
        List<String> views = given(
                "--offsets", offsetsView, "--members", membersView, "--history", historyView, "--state", stateView);
        if (!action.describe) {
            for (String v : views) {
                if (!(v.equals("--state") && action.list)) {
                    throw bad(v + " goes with --describe" + (v.equals("--state") ? " or --list" : ""));
                }
            }
        } else if (views.size() > 1) {
            throw bad("give at most one of " + String.join(", ", views) + " with --describe");
        }
        if (maxEntries != null && !historyView) {
            throw bad("--max-entries goes with --describe --history");
        }
        if (maxEntries != null && maxEntries < 1) {
            throw bad("--max-entries must be at least 1, got " + maxEntries);
        }
        List<String> targets = given(
                "--to-earliest",
                toEarliest,
                "--to-latest",
                toLatest,
                "--to-offset",
                toOffset != null,
                "--to-datetime",
                toDatetime != null,
                "--by-duration",
                byDuration != null,
                "--shift-by",
                shiftBy != null);
        List<String> resetOnly = new ArrayList<>(targets);
        resetOnly.addAll(given("--execute", execute, "--dry-run", dryRun, "--all-topics", allTopics));
        if (!action.resetOffsets) {
            if (!resetOnly.isEmpty()) {
                throw bad(resetOnly.get(0) + " goes with --reset-offsets");
            }
            if (!topics.isEmpty() && !action.deleteOffsets) {
                throw bad("--topic goes with --reset-offsets or --delete-offsets");
            }
            if (action.deleteOffsets && topics.isEmpty()) {
                throw bad("--delete-offsets needs --topic T or T:p,p,...");
            }
        } else {
            if (targets.size() != 1) {
                throw bad(
                        targets.isEmpty()
                                ? "--reset-offsets needs one of --to-earliest, --to-latest, --to-offset, --to-datetime,"
                                        + " --by-duration, --shift-by"
                                : "give one reset target, not " + String.join(" and ", targets));
            }
            if (topics.isEmpty() == !allTopics) {
                throw bad(
                        allTopics
                                ? "give --topic or --all-topics, not both"
                                : "--reset-offsets needs --topic or --all-topics");
            }
            if (execute && dryRun) {
                throw bad("give --dry-run or --execute, not both");
            }
            if (toOffset != null && toOffset < 0) {
                throw bad("--to-offset must be at least 0, got " + toOffset);
            }
        }
        topicSpecs(); // parse errors exit 2 before anything is sent
    }

    /** The reset target, with {@code --to-datetime} and {@code --by-duration} resolved to epoch ms. */
    OffsetResetPlanner.Target resetTarget() {
        if (toEarliest) {
            return new OffsetResetPlanner.Target.ToEarliest();
        }
        if (toLatest) {
            return new OffsetResetPlanner.Target.ToLatest();
        }
        if (toOffset != null) {
            return new OffsetResetPlanner.Target.ToOffset(toOffset);
        }
        if (shiftBy != null) {
            return new OffsetResetPlanner.Target.ShiftBy(shiftBy);
        }
        if (toDatetime != null) {
            return new OffsetResetPlanner.Target.ToTime(parseDatetime(toDatetime));
        }
        Duration d;
        try {
            d = Duration.parse(byDuration);
        } catch (DateTimeParseException e) {
            throw bad("--by-duration '" + byDuration + "' is not an ISO-8601 duration like PT1H30M or P1DT12H");
        }
        if (d.isNegative() || d.isZero()) {
            throw bad("--by-duration must be positive (how far back from now), got " + byDuration);
        }
        return new OffsetResetPlanner.Target.ToTime(clock.millis() - d.toMillis());
    }

    /** YYYY-MM-DDTHH:mm:SS[.sss] in {@link #zone}, or with an offset (Z, +hh:mm). */
    long parseDatetime(String s) {
        try {
            return OffsetDateTime.parse(s).toInstant().toEpochMilli();
        } catch (DateTimeParseException withoutOffset) {
            try {
                return LocalDateTime.parse(s).atZone(zone).toInstant().toEpochMilli();
            } catch (DateTimeParseException e) {
                throw bad("--to-datetime '" + s + "' is not a date-time like 2026-12-04T13:00:00.000 (local"
                        + " time) or 2026-12-04T13:00:00.000Z / +01:00");
            }
        }
    }

    /** The tool's defaults, then {@code --command-config}, then {@code --command-property}. */
    Properties clientProperties() {
        Properties p = new Properties();
        TOOL_CLIENT_DEFAULTS.forEach(p::setProperty);
        if (commandConfig != null) {
            try (Reader r = Files.newBufferedReader(commandConfig)) {
                p.load(r);
            } catch (IOException e) {
                throw bad("--command-config " + commandConfig + " cannot be read: " + e.getMessage());
            }
        }
        if (commandProperties != null) {
            commandProperties.forEach(p::setProperty);
        }
        p.setProperty("bootstrap.servers", bootstrapServer);
        return p;
    }

    // ---- messages

    /** How long the failure path probes each --bootstrap-server address for its kind. */
    private static final int PROBE_MS = 2_000;

    private String explain(StellflowException e) {
        return switch (e.errorCode()) {
            case StellflowException.NETWORK_ERROR -> {
                // A controller's port or an unknown host: say which, as the other tools do.
                String misdirected = ClusterAccess.misdirectedBrokers(bootstrapServer, PROBE_MS);
                yield misdirected != null
                        ? misdirected
                        : "cannot reach the cluster at " + bootstrapServer + ": " + e.getMessage()
                                + "; check --bootstrap-server (a broker's host:port)";
            }
            case Errors.UNSUPPORTED_VERSION ->
                e.getMessage() + "; the broker does not serve consumer groups (apiKeys 21-25, OffsetFetch v1)";
            case Errors.FEATURE_NOT_ENABLED -> e.getMessage() + "; the cluster has consumer groups disabled";
            case Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR ->
                e.getMessage() + "; the group's coordinator is loading or moving, try again in a few seconds";
            default -> e.getMessage();
        };
    }

    private static String noSuchGroup(String groupId) {
        return "consumer group '" + groupId + "' does not exist (no members, no committed offsets); --list"
                + " shows the groups";
    }

    private int fail(String message) {
        spec.commandLine().getErr().println("error: " + message);
        spec.commandLine().getErr().flush();
        return 1;
    }

    private CommandLine.ParameterException bad(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    /** The names among {@code (name, given)} pairs that were given. */
    private static List<String> given(Object... pairs) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < pairs.length; i += 2) {
            if ((Boolean) pairs[i + 1]) {
                out.add((String) pairs[i]);
            }
        }
        return out;
    }

    public static void main(String[] args) {
        System.exit(Tools.commandLine(new ConsumerGroupsCommand()).execute(args));
    }
}
