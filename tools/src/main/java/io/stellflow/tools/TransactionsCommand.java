package io.stellflow.tools;

import io.stellflow.client.AdminTransactions;
import io.stellflow.client.PartitionInfo;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeProducersResponse;
import io.stellflow.protocol.message.DescribeProducersResponse.Producer;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.DescribeTransactionsResponse.DescribedTransaction;
import io.stellflow.protocol.message.ListTransactionsResponse.ListedTransaction;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * {@code bin/stellflow-transactions.sh --bootstrap-server host:port <subcommand>}: Kafka's KIP-664
 * transaction tool ({@code docs/operations.md}, "Transactions"), with Kafka's subcommands and flags:
 *
 * <ul>
 *   <li>{@code list}: every transactional id of the cluster, its producer id and state
 *       (ListTransactions at every broker).
 *   <li>{@code describe --transactional-id X}: the id's state at its coordinator
 *       (DescribeTransactions).
 *   <li>{@code describe-producers --topic T --partition P}: the producer state of a partition at its
 *       leader (DescribeProducers).
 *   <li>{@code find-hanging (--broker-id B | --topic T [--partition P]) [--max-transaction-timeout
 *       MIN]}: open transactions older than the timeout (15 min) whose coordinator does not list the
 *       partition in that producer's ongoing transaction: a transaction nobody will ever close, which
 *       pins the partition's last stable offset.
 *   <li>{@code abort --topic T --partition P (--start-offset O | --producer-id I --producer-epoch E
 *       --coordinator-epoch C) [--force]}: has the partition's leader write an ABORT marker for that
 *       transaction (WriteTxnMarkers), so the last stable offset moves on; refused unless it is
 *       hanging by find-hanging's coordinator rule (the coordinator neither has it ongoing or
 *       completing with the partition nor fails to answer), which {@code --force} (ours) skips.
 * </ul>
 *
 * <p>Exit status 0; 1 with one {@code error:} line when the cluster cannot be reached, a broker
 * refuses, an id or transaction is not found, or the abort is refused (the coordinator's or the
 * log's reason named); 2 for bad or missing flags. {@code find-hanging} exits 0 whether or not it
 * found any. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-transactions",
        mixinStandardHelpOptions = true,
        description = "List, describe, find hanging and abort transactions.",
        subcommands = {
            TransactionsCommand.ListCommand.class,
            TransactionsCommand.DescribeCommand.class,
            TransactionsCommand.DescribeProducersCommand.class,
            TransactionsCommand.FindHangingCommand.class,
            TransactionsCommand.AbortCommand.class
        })
public final class TransactionsCommand implements Callable<Integer> {
    /** Kafka's default of {@code --max-transaction-timeout}: {@code transaction.max.timeout.ms}, 15 min. */
    static final int DEFAULT_MAX_TRANSACTION_TIMEOUT_MINUTES = 15;

    /** As the consumer-groups tool: bounded retries and timeouts, so an unreachable broker fails within seconds. */
    static final Map<String, String> TOOL_CLIENT_DEFAULTS = Map.of(
            "retries", "5",
            "socket.connection.setup.timeout.ms", "5000",
            "request.timeout.ms", "15000",
            "client.id", "stellflow-transactions");

    /** How long the failure path probes each --bootstrap-server address for its kind. */
    private static final int PROBE_MS = 2_000;

    /** Inherited: given before or after the subcommand ({@code list --bootstrap-server B} too). */
    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            required = true,
            scope = ScopeType.INHERIT,
            description = "host:port[,host:port...] of brokers")
    String bootstrapServer;

    @Option(names = "--command-property", scope = ScopeType.INHERIT, description = "extra client property k=v")
    Map<String, String> props;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** The wall clock, epoch ms (tests replace it). */
    LongSupplier nowMs = System::currentTimeMillis;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(
                spec.commandLine(),
                "a subcommand is required: list, describe, describe-producers, find-hanging or abort");
    }

    /** One admin session: the action's exit status, or 1 with a one-line reason on a client error. */
    int run(CommandLine cl, Action action) {
        PrintWriter out = cl.getOut();
        PrintWriter err = cl.getErr();
        java.util.Properties p = new java.util.Properties();
        TOOL_CLIENT_DEFAULTS.forEach(p::setProperty);
        p.putAll(ClientProps.of(bootstrapServer, props));
        try (StellflowAdmin admin = new StellflowAdmin(p)) {
            int exit = action.run(admin, out, err);
            out.flush();
            err.flush();
            return exit;
        } catch (StellflowException e) {
            err.println("error: " + explain(e));
            err.flush();
            return 1;
        }
    }

    private String explain(StellflowException e) {
        if (e.errorCode() == StellflowException.NETWORK_ERROR) {
            String misdirected = ClusterAccess.misdirectedBrokers(bootstrapServer, PROBE_MS);
            return misdirected != null
                    ? misdirected
                    : "cannot reach the cluster at " + bootstrapServer + ": " + e.getMessage()
                            + "; check --bootstrap-server (a broker's host:port)";
        }
        return e.getMessage() + " (" + Errors.name(e.errorCode()) + ")";
    }

    /** What a subcommand does with the admin client. */
    interface Action {
        int run(StellflowAdmin admin, PrintWriter out, PrintWriter err);
    }

    static int fail(PrintWriter err, String message) {
        err.println("error: " + message);
        return 1;
    }

    // ---------------------------------------------------------------- list

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the transactional ids")
    static final class ListCommand implements Callable<Integer> {
        @ParentCommand
        TransactionsCommand parent;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            return parent.run(spec.commandLine(), (admin, out, err) -> {
                TextTable t = new TextTable("TRANSACTIONAL-ID", "PRODUCER-ID", "TRANSACTION-STATE");
                for (ListedTransaction l : admin.transactions().listTransactions(List.of(), List.of())) {
                    t.row(l.transactionalId(), l.producerId(), l.state());
                }
                t.print(out);
                return 0;
            });
        }
    }

    // ---------------------------------------------------------------- describe

    @Command(
            name = "describe",
            mixinStandardHelpOptions = true,
            description = "Describe a transactional id at its coordinator")
    static final class DescribeCommand implements Callable<Integer> {
        @ParentCommand
        TransactionsCommand parent;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--transactional-id", required = true, description = "the transactional id")
        String transactionalId;

        @Override
        public Integer call() {
            if (transactionalId.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--transactional-id must not be empty");
            }
            return parent.run(spec.commandLine(), (admin, out, err) -> {
                DescribedTransaction d = admin.transactions()
                        .describeTransactions(List.of(transactionalId))
                        .get(0);
                if (d.errorCode() != Errors.NONE) {
                    return fail(
                            err,
                            "DescribeTransactions " + transactionalId + " refused: " + Errors.name(d.errorCode())
                                    + (d.errorCode() == Errors.NOT_COORDINATOR
                                                    || d.errorCode() == Errors.COORDINATOR_NOT_AVAILABLE
                                            ? "; its coordinator is loading or moving, try again in a few seconds"
                                            : ""));
                }
                if (DescribeTransactionsResponse.DEAD.equals(d.state())) {
                    return fail(
                            err,
                            "transactional id '" + transactionalId + "' does not exist at its coordinator; list"
                                    + " shows the ids");
                }
                TextTable t = new TextTable(
                        "TRANSACTIONAL-ID",
                        "PRODUCER-ID",
                        "PRODUCER-EPOCH",
                        "TRANSACTION-STATE",
                        "TRANSACTION-SEQUENCE",
                        "TRANSACTION-TIMEOUT-MS",
                        "CURRENT-TRANSACTION-START-TIME-MS",
                        "TRANSACTION-DURATION-MS",
                        "TOPIC-PARTITIONS");
                StringJoiner partitions = new StringJoiner(",");
                d.partitions().forEach(tp -> partitions.add(tp.topic() + "-" + tp.partition()));
                boolean open = d.transactionStartTimeMs() >= 0 && "Ongoing".equals(d.state());
                t.row(
                        d.transactionalId(),
                        d.producerId(),
                        d.producerEpoch(),
                        d.state(),
                        d.transactionSequence(),
                        d.transactionTimeoutMs(),
                        d.transactionStartTimeMs() < 0 ? null : d.transactionStartTimeMs(),
                        open ? parent.nowMs.getAsLong() - d.transactionStartTimeMs() : null,
                        partitions.toString());
                t.print(out);
                return 0;
            });
        }
    }

    // ---------------------------------------------------------------- describe-producers

    @Command(
            name = "describe-producers",
            mixinStandardHelpOptions = true,
            description = "Describe the producers of a partition at its leader")
    static final class DescribeProducersCommand implements Callable<Integer> {
        @ParentCommand
        TransactionsCommand parent;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--topic", required = true, description = "the topic")
        String topic;

        @Option(names = "--partition", required = true, description = "the partition")
        int partition;

        @Override
        public Integer call() {
            TopicPartition tp = partitionOf(spec, topic, partition);
            return parent.run(spec.commandLine(), (admin, out, err) -> {
                DescribeProducersResponse.Partition p =
                        admin.transactions().describeProducers(List.of(tp)).get(tp);
                if (p.errorCode() != Errors.NONE) {
                    return fail(err, "DescribeProducers " + tp + " refused: " + Errors.name(p.errorCode()));
                }
                TextTable t = new TextTable(
                        "PRODUCER-ID",
                        "PRODUCER-EPOCH",
                        "LAST-SEQUENCE",
                        "LAST-TIMESTAMP-MS",
                        "COORDINATOR-EPOCH",
                        "CURRENT-TRANSACTION-START-OFFSET",
                        "TRANSACTION-SEQUENCE");
                for (Producer s : p.producers()) {
                    t.row(
                            s.producerId(),
                            s.producerEpoch(),
                            s.lastSequence(),
                            s.lastTimestampMs(),
                            s.coordinatorEpoch(),
                            s.currentTxnStartOffset(),
                            s.transactionSequence());
                }
                t.print(out);
                return 0;
            });
        }
    }

    static TopicPartition partitionOf(CommandLine.Model.CommandSpec spec, String topic, int partition) {
        if (topic.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--topic must not be empty");
        }
        if (partition < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--partition must be >= 0, got " + partition);
        }
        return new TopicPartition(topic, partition);
    }

    // ---------------------------------------------------------------- find-hanging

    @Command(
            name = "find-hanging",
            mixinStandardHelpOptions = true,
            description = "Find open transactions their coordinator does not know (hanging)")
    static final class FindHangingCommand implements Callable<Integer> {
        @ParentCommand
        TransactionsCommand parent;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--broker-id", description = "the partitions this broker leads")
        Integer brokerId;

        @Option(names = "--topic", description = "the partitions of this topic (instead of --broker-id)")
        String topic;

        @Option(names = "--partition", description = "only this partition of --topic")
        Integer partition;

        @Option(
                names = "--max-transaction-timeout",
                description = "minutes a transaction may stay open (default: ${DEFAULT-VALUE}, Kafka's"
                        + " transaction.max.timeout.ms); older ones are checked",
                defaultValue = "" + DEFAULT_MAX_TRANSACTION_TIMEOUT_MINUTES)
        int maxTransactionTimeoutMinutes;

        @Override
        public Integer call() {
            if ((brokerId == null) == (topic == null)) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "find-hanging needs exactly one of --broker-id or --topic");
            }
            if (partition != null && topic == null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--partition needs --topic");
            }
            if (brokerId != null && brokerId < 0) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--broker-id must be >= 0, got " + brokerId);
            }
            if (topic != null) {
                partitionOf(spec, topic, partition == null ? 0 : partition);
            }
            if (maxTransactionTimeoutMinutes < 0) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "--max-transaction-timeout must be >= 0 minutes, got " + maxTransactionTimeoutMinutes);
            }
            return parent.run(spec.commandLine(), (admin, out, err) -> {
                List<TopicPartition> partitions = partitions(admin);
                if (partitions == null) {
                    return fail(
                            err,
                            brokerId != null
                                    ? "broker " + brokerId + " is not in the cluster (brokers: " + admin.brokerIds()
                                            + ")"
                                    : "topic " + topic + (partition == null ? "" : " partition " + partition)
                                            + " does not exist");
                }
                List<Hanging> hanging = findHanging(
                        admin.transactions(),
                        partitions,
                        maxTransactionTimeoutMinutes * 60_000L,
                        parent.nowMs.getAsLong());
                TextTable t = new TextTable(
                        "TOPIC",
                        "PARTITION",
                        "PRODUCER-ID",
                        "PRODUCER-EPOCH",
                        "COORDINATOR-EPOCH",
                        "START-OFFSET",
                        "LAST-TIMESTAMP-MS",
                        "DURATION-MINUTES");
                for (Hanging h : hanging) {
                    t.row(
                            h.tp().topic(),
                            h.tp().partition(),
                            h.producer().producerId(),
                            h.producer().producerEpoch(),
                            h.producer().coordinatorEpoch(),
                            h.producer().currentTxnStartOffset(),
                            h.producer().lastTimestampMs(),
                            h.durationMs() / 60_000);
                }
                t.print(out);
                return 0;
            });
        }

        /** The partitions to check, or null when the broker or topic does not exist. */
        private List<TopicPartition> partitions(StellflowAdmin admin) {
            List<TopicPartition> out = new ArrayList<>();
            if (brokerId != null) {
                if (!admin.brokerIds().contains(brokerId)) {
                    return null;
                }
                for (TopicDescription d : admin.describeTopics(List.of()).values()) {
                    for (PartitionInfo p : d.partitions()) {
                        if (p.leaderId() == brokerId) {
                            out.add(new TopicPartition(d.name(), p.partition()));
                        }
                    }
                }
                return out;
            }
            TopicDescription d = admin.describeTopics(List.of(topic)).get(topic);
            if (d == null || d.errorCode() != Errors.NONE) {
                return null;
            }
            for (PartitionInfo p : d.partitions()) {
                if (partition == null || partition == p.partition()) {
                    out.add(new TopicPartition(topic, p.partition()));
                }
            }
            return out.isEmpty() ? null : out;
        }
    }

    /** An open transaction nobody will close. */
    record Hanging(TopicPartition tp, Producer producer, long durationMs) {}

    /**
     * Kafka's rule: an open transaction (currentTxnStartOffset &gt;= 0) whose producer last wrote
     * at least {@code maxTimeoutMs} ago, and whose producer id's transactional ids (ListTransactions
     * filtered by producer id) have no ongoing transaction at their coordinator that lists the
     * partition, is hanging. A partition whose leader refused is skipped (its error on stderr would
     * be noise for a cluster-wide scan; {@code describe-producers} shows it).
     */
    static List<Hanging> findHanging(
            AdminTransactions txns, List<TopicPartition> partitions, long maxTimeoutMs, long nowMs) {
        Map<TopicPartition, List<Producer>> candidates =
                candidates(txns.describeProducers(partitions), maxTimeoutMs, nowMs);
        if (candidates.isEmpty()) {
            return List.of();
        }
        List<Long> producerIds = new ArrayList<>();
        candidates
                .values()
                .forEach(ps -> ps.forEach(p -> {
                    if (!producerIds.contains(p.producerId())) {
                        producerIds.add(p.producerId());
                    }
                }));
        return hanging(candidates, coordinatorsOf(txns, producerIds), nowMs);
    }

    /**
     * What the coordinators say of each producer id's transactional ids: ListTransactions filtered by
     * the producer ids, then DescribeTransactions of the ids found, keyed by the listed producer id
     * (a producer id no id is bound to is absent). Shared by {@code find-hanging} and {@code abort}.
     *
     * @throws StellflowException when a broker does not answer or refuses ListTransactions
     */
    static Map<Long, List<DescribedTransaction>> coordinatorsOf(AdminTransactions txns, List<Long> producerIds) {
        Map<String, Long> listed = new LinkedHashMap<>();
        for (ListedTransaction l : txns.listTransactions(List.of(), producerIds)) {
            listed.put(l.transactionalId(), l.producerId());
        }
        Map<Long, List<DescribedTransaction>> byProducer = new HashMap<>();
        if (!listed.isEmpty()) {
            for (DescribedTransaction d : txns.describeTransactions(List.copyOf(listed.keySet()))) {
                // keyed by the listed producer id: an entry with an error carries -1
                byProducer
                        .computeIfAbsent(listed.get(d.transactionalId()), k -> new ArrayList<>())
                        .add(d);
            }
        }
        return byProducer;
    }

    /**
     * The open transactions of the partitions that answered, whose producer last wrote at least
     * {@code maxTimeoutMs} before {@code nowMs}.
     */
    static Map<TopicPartition, List<Producer>> candidates(
            Map<TopicPartition, DescribeProducersResponse.Partition> producers, long maxTimeoutMs, long nowMs) {
        Map<TopicPartition, List<Producer>> out = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, DescribeProducersResponse.Partition> e : producers.entrySet()) {
            if (e.getValue().errorCode() != Errors.NONE) {
                continue;
            }
            for (Producer p : e.getValue().producers()) {
                if (p.currentTxnStartOffset() >= 0 && nowMs - p.lastTimestampMs() >= maxTimeoutMs) {
                    out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(p);
                }
            }
        }
        return out;
    }

    /**
     * The candidates whose producer id has no transactional id with an open transaction listing the
     * partition ({@code byProducer}: the coordinators' answers for each producer id's ids).
     */
    static List<Hanging> hanging(
            Map<TopicPartition, List<Producer>> candidates,
            Map<Long, List<DescribedTransaction>> byProducer,
            long nowMs) {
        List<Hanging> out = new ArrayList<>();
        candidates.forEach((tp, producers) -> {
            for (Producer p : producers) {
                if (!coordinatorHasIt(byProducer.getOrDefault(p.producerId(), List.of()), tp)) {
                    out.add(new Hanging(tp, p, nowMs - p.lastTimestampMs()));
                }
            }
        });
        return out;
    }

    /** Whether one of the producer's ids has an open transaction at its coordinator listing {@code tp}. */
    private static boolean coordinatorHasIt(List<DescribedTransaction> described, TopicPartition tp) {
        // a coordinator that could not say counts: never call a transaction hanging on a guess
        return coordinatorTransaction(described, tp) != null;
    }

    /**
     * The first of {@code described} (one producer id's transactional ids at their coordinators) that
     * is an ongoing or completing transaction listing {@code tp}, or an error (the coordinator could
     * not say); null when none is: the coordinator will never close the producer's transaction in
     * {@code tp}.
     */
    static DescribedTransaction coordinatorTransaction(List<DescribedTransaction> described, TopicPartition tp) {
        for (DescribedTransaction d : described) {
            if (d.errorCode() != Errors.NONE) {
                return d;
            }
            boolean open = "Ongoing".equals(d.state())
                    || "PrepareCommit".equals(d.state())
                    || "PrepareAbort".equals(d.state());
            if (open
                    && d.partitions()
                            .contains(new DescribeTransactionsResponse.TopicPartition(tp.topic(), tp.partition()))) {
                return d;
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- abort

    @Command(
            name = "abort",
            mixinStandardHelpOptions = true,
            description = {
                "Abort a hanging transaction: the partition's leader writes an ABORT marker.",
                "Refused (exit 1, nothing written) while the producer's transactional id still has the"
                        + " transaction ongoing (or completing) with this partition at its coordinator, or"
                        + " when the coordinator cannot be asked; --force skips that check."
            })
    static final class AbortCommand implements Callable<Integer> {
        @ParentCommand
        TransactionsCommand parent;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--topic", required = true, description = "the topic")
        String topic;

        @Option(names = "--partition", required = true, description = "the partition")
        int partition;

        @Option(
                names = "--start-offset",
                description = "the first offset of the transaction (find-hanging's START-OFFSET)")
        Long startOffset;

        @Option(names = "--producer-id", description = "the producer id (with --producer-epoch, --coordinator-epoch)")
        Long producerId;

        @Option(names = "--producer-epoch", description = "the producer epoch")
        Short producerEpoch;

        @Option(names = "--coordinator-epoch", description = "the coordinator epoch of the marker")
        Integer coordinatorEpoch;

        @Option(
                names = "--force",
                description = "abort even though the coordinator still has the transaction open with this"
                        + " partition, or cannot be asked (only when you know its producer is gone: a commit"
                        + " it sends later is acknowledged but its records here stay aborted)")
        boolean force;

        @Override
        public Integer call() {
            TopicPartition tp = partitionOf(spec, topic, partition);
            boolean explicit = producerId != null || producerEpoch != null || coordinatorEpoch != null;
            if ((startOffset == null) == !explicit) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "abort needs either --start-offset or all of --producer-id, --producer-epoch and"
                                + " --coordinator-epoch");
            }
            if (explicit && (producerId == null || producerEpoch == null || coordinatorEpoch == null)) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "abort without --start-offset needs all of --producer-id, --producer-epoch and"
                                + " --coordinator-epoch");
            }
            if ((startOffset != null && startOffset < 0) || (producerId != null && producerId < 0)) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--start-offset and --producer-id must be >= 0");
            }
            if ((producerEpoch != null && producerEpoch < 0) || (coordinatorEpoch != null && coordinatorEpoch < 0)) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(),
                        "--producer-epoch and --coordinator-epoch must be >= 0, got " + producerEpoch + " and "
                                + coordinatorEpoch);
            }
            return parent.run(spec.commandLine(), (admin, out, err) -> {
                DescribeProducersResponse.Partition p =
                        admin.transactions().describeProducers(List.of(tp)).get(tp);
                if (p.errorCode() != Errors.NONE) {
                    return fail(err, "DescribeProducers " + tp + " refused: " + Errors.name(p.errorCode()));
                }
                Producer open = null;
                for (Producer s : p.producers()) {
                    if (s.currentTxnStartOffset() >= 0
                            && (startOffset != null
                                    ? s.currentTxnStartOffset() == startOffset
                                    : s.producerId() == producerId)) {
                        open = s;
                    }
                }
                if (open == null) {
                    return fail(
                            err,
                            (startOffset != null
                                            ? "no open transaction starts at offset " + startOffset
                                            : "producer " + producerId + " has no open transaction")
                                    + " in " + tp + "; describe-producers shows the open ones");
                }
                if (!force) {
                    String live = liveAtCoordinator(admin.transactions(), open, tp, parent.nowMs.getAsLong());
                    if (live != null) {
                        return fail(err, live);
                    }
                }
                short epoch = startOffset != null ? open.producerEpoch() : producerEpoch;
                int coordEpoch = startOffset != null ? Math.max(open.coordinatorEpoch(), 0) : coordinatorEpoch;
                short code = admin.transactions()
                        .abortTransaction(tp, open.producerId(), epoch, coordEpoch, open.transactionSequence());
                if (code != Errors.NONE) {
                    return fail(
                            err,
                            "abort of producer " + open.producerId() + " in " + tp + " refused: " + Errors.name(code)
                                    + refusal(code));
                }
                out.printf(
                        "Aborted the transaction of producer %d (epoch %d) in %s starting at offset %d%n",
                        open.producerId(), epoch, tp, open.currentTxnStartOffset());
                return 0;
            });
        }

        /**
         * find-hanging's coordinator rule for one producer and partition: why the abort must not be
         * sent (the producer's transactional id has the transaction ongoing or completing with {@code
         * tp} at its coordinator, or the coordinator cannot be asked), or null when no coordinator will
         * ever close it.
         */
        static String liveAtCoordinator(AdminTransactions txns, Producer open, TopicPartition tp, long nowMs) {
            String what = "producer " + open.producerId() + "'s transaction in " + tp;
            String force = "; nothing written (run with --force if you know the producer is gone)";
            DescribedTransaction d;
            try {
                d = coordinatorTransaction(
                        coordinatorsOf(txns, List.of(open.producerId())).getOrDefault(open.producerId(), List.of()),
                        tp);
            } catch (StellflowException e) {
                return "cannot ask the transaction coordinators whether " + what + " is still open: " + e.getMessage()
                        + force;
            }
            if (d == null) {
                return null;
            }
            if (d.errorCode() != Errors.NONE) {
                return "cannot ask the coordinator of transactional id '" + d.transactionalId() + "' whether " + what
                        + " is still open: " + Errors.name(d.errorCode()) + force;
            }
            String started = d.transactionStartTimeMs() < 0
                    ? ""
                    : " started at " + d.transactionStartTimeMs() + " (epoch ms; "
                            + (nowMs - d.transactionStartTimeMs()) + " ms ago)";
            return "transactional id '" + d.transactionalId() + "' still has " + what + " at its coordinator: state "
                    + d.state() + started + ", timeout " + d.transactionTimeoutMs() + " ms; committing or aborting"
                    + " it belongs to its producer (or the coordinator at the timeout)" + force;
        }

        private static String refusal(short code) {
            return switch (code) {
                case Errors.INVALID_PRODUCER_EPOCH -> " (the producer has a newer epoch than --producer-epoch)";
                case Errors.TRANSACTION_COORDINATOR_FENCED ->
                    " (--coordinator-epoch is below the epoch of the producer's last marker)";
                case Errors.INVALID_TXN_STATE -> " (an older transaction than the one open)";
                default -> "";
            };
        }
    }

    public static void main(String[] args) {
        System.exit(Tools.commandLine(new TransactionsCommand()).execute(args));
    }
}
