package io.stellflow.perf.txn;

import io.stellflow.perf.groups.GroupBench;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * The transactional cases of the perf lab ({@code perf/lab-transactions.sh}, issue #20), run the same
 * way against any system through its {@link TxnClient} adapter. Each case prints one JSON object on
 * stdout in the load generator's {@code --json} shape ({@code name, records, bytes, elapsed_ms,
 * mb_per_s, records_per_s, p50_ms, p99_ms, p999_ms, max_ms, errors}, latencies -1 when not measured)
 * plus case fields, which the lab hands to {@code LabCommand add}. Diagnostics go to stderr.
 *
 * <ul>
 *   <li>{@code produce --topic T --num-records N [--record-size 1024] [--partitions 1]
 *       [--payload-file F] (--transaction-duration-ms D | --transaction-records R | --no-transactions)}:
 *       one producer sends N records as fast as it can, record i to partition {@code i % partitions},
 *       values the lines of F taken in turn or 64 random A-Z values of the record size. With
 *       transactions: {@code initTransactions} (not timed), then transactions ended by {@link
 *       TransactionBoundary} (the last one at the end); {@code --no-transactions}: the same loop with an
 *       idempotent producer and a {@code flush} at the end. {@code elapsed_ms} runs from the first send
 *       to the end of the last commit (or flush); p50/p99/p99.9 are the latencies of {@code
 *       commitTransaction} calls (which flush the transaction's records first), -1 without
 *       transactions; extra fields {@code transactions}, {@code transactions_per_s}.
 *   <li>{@code ctp --input-topic I --output-topic O ...}: consume-transform-produce latency, see
 *       {@link CtpPipeline}.
 * </ul>
 *
 * <p>{@code --prop k=v} (repeatable) adds a producer property, {@code --consumer-prop k=v} a consumer
 * property. Not thread-safe; one case per instance, driven from the calling thread.
 */
public final class TxnBench {
    /** Flags that take no value. */
    private static final Set<String> FLAGS = Set.of("no-transactions", "plain");

    /** The options that take a value ({@code --prop} and {@code --consumer-prop} aside); any other is refused. */
    private static final Set<String> OPTIONS = Set.of(
            "bootstrap-server",
            "topic",
            "partitions",
            "num-records",
            "record-size",
            "payload-file",
            "transaction-duration-ms",
            "transaction-records",
            "transactional-id",
            "timeout-ms",
            "name",
            "input-topic",
            "output-topic",
            "group",
            "rate",
            "warmup-ms",
            "duration-ms",
            "drain-ms");

    private final TxnClient.Factory factory;
    private final Map<String, String> opts;
    private final Map<String, String> producerProps;
    private final Map<String, String> consumerProps;
    private final PrintStream out;

    TxnBench(
            TxnClient.Factory factory,
            Map<String, String> opts,
            Map<String, String> producerProps,
            Map<String, String> consumerProps,
            PrintStream out) {
        this.factory = factory;
        this.opts = opts;
        this.producerProps = producerProps;
        this.consumerProps = consumerProps;
        this.out = out;
    }

    /**
     * Runs the case named by {@code args[0]} ({@code produce} or {@code ctp}) with {@code --key value}
     * options. Each system's adapter calls this from its {@code main}.
     *
     * @return 0 when the case ran without an error, 1 otherwise
     * @throws IllegalArgumentException on a missing, unknown or malformed option
     */
    public static int run(String[] args, TxnClient.Factory factory) throws InterruptedException {
        return run(args, factory, System.out);
    }

    static int run(String[] args, TxnClient.Factory factory, PrintStream out) throws InterruptedException {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: produce|ctp --bootstrap-server H:P ... (see TxnBench javadoc)");
        }
        Map<String, String> opts = new LinkedHashMap<>();
        Map<String, String> producer = new LinkedHashMap<>();
        Map<String, String> consumer = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --key value, got " + args[i]);
            }
            String key = args[i].substring(2);
            if (FLAGS.contains(key)) {
                opts.put(key, "true");
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("--" + key + " needs a value");
            }
            String value = args[++i];
            switch (key) {
                case "prop" -> put(producer, value);
                case "consumer-prop" -> put(consumer, value);
                default -> {
                    if (!OPTIONS.contains(key)) {
                        // A mistyped option (--producer-prop for --prop) must not run a case with defaults.
                        throw new IllegalArgumentException("unknown option --" + key + " (options: --"
                                + String.join(", --", new java.util.TreeSet<>(OPTIONS))
                                + ", --prop k=v, --consumer-prop k=v, --no-transactions, --plain)");
                    }
                    opts.put(key, value);
                }
            }
        }
        TxnBench bench = new TxnBench(factory, opts, producer, consumer, out);
        return switch (args[0]) {
            case "produce" -> bench.produce();
            case "ctp" -> new CtpPipeline(bench).run();
            default -> throw new IllegalArgumentException("unknown case " + args[0] + " (produce or ctp)");
        };
    }

    private static void put(Map<String, String> props, String kv) {
        String[] parts = kv.split("=", 2);
        if (parts.length != 2 || parts[0].isEmpty()) {
            throw new IllegalArgumentException("a property wants k=v, got " + kv);
        }
        props.put(parts[0], parts[1]);
    }

    // --- produce --------------------------------------------------------------------------------

    int produce() throws InterruptedException {
        String topic = required("topic");
        String name = opts.getOrDefault("name", topic);
        long numRecords = longOpt("num-records", -1);
        int partitions = (int) longOpt("partitions", 1);
        int recordSize = (int) longOpt("record-size", 1024);
        boolean transactions = !flag("no-transactions");
        if (numRecords <= 0 || partitions <= 0 || recordSize <= 0) {
            throw new IllegalArgumentException("--num-records, --partitions and --record-size must be > 0");
        }
        long durationMs = longOpt("transaction-duration-ms", 0);
        long maxRecords = longOpt("transaction-records", 0);
        TransactionBoundary boundary = transactions ? new TransactionBoundary(durationMs, maxRecords) : null;
        List<byte[]> values = values(opts.get("payload-file"), recordSize);
        String transactionalId =
                transactions ? opts.getOrDefault("transactional-id", "txn-bench-" + name + "-" + suffix()) : null;

        Histogram commitUs = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
        LongAdder sendErrors = new LongAdder();
        AtomicReference<Exception> firstSendError = new AtomicReference<>();
        TxnClient.SendCallback callback = e -> {
            if (e != null) {
                sendErrors.increment();
                firstSendError.compareAndSet(null, e);
            }
        };
        long sent = 0;
        long bytes = 0;
        long transactionsDone = 0;
        long errors = 0;
        long startNs;
        long endNs;
        try (TxnClient.Producer p = factory.producer(required("bootstrap-server"), transactionalId, producerProps)) {
            startNs = System.nanoTime();
            boolean open = false;
            try {
                if (transactions) {
                    p.initTransactions(); // not timed: startNs is taken again below
                    startNs = System.nanoTime();
                    boundary.begin(startNs);
                    p.beginTransaction();
                    open = true;
                }
                int valueCount = values.size();
                while (sent < numRecords) {
                    byte[] v = values.get((int) (sent % valueCount));
                    p.send(topic, (int) (sent % partitions), null, v, callback);
                    sent++;
                    bytes += v.length;
                    if (transactions && boundary.afterSend(System.nanoTime())) {
                        commitUs.recordValue(timedCommitUs(p));
                        open = false;
                        transactionsDone++;
                        if (sent < numRecords) {
                            boundary.begin(System.nanoTime());
                            p.beginTransaction();
                            open = true;
                        }
                    }
                }
                if (open) {
                    // The last transaction, shorter than the boundary: committed and timed like the others.
                    commitUs.recordValue(timedCommitUs(p));
                    open = false;
                    transactionsDone++;
                } else if (!transactions) {
                    p.flush();
                }
            } catch (RuntimeException e) {
                System.err.println("txn-bench: " + name + " stopped after " + sent + " records: " + e);
                errors++;
                if (open) {
                    abortQuietly(p, name);
                }
            }
            endNs = System.nanoTime();
        }
        errors += sendErrors.sum();
        if (firstSendError.get() != null) {
            System.err.println(
                    "txn-bench: " + sendErrors.sum() + " send(s) failed, the first: " + firstSendError.get());
        }
        double seconds = Math.max(endNs - startNs, 1) / 1e9;
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("mode", transactions ? "transactional" : "idempotent");
        extra.put("partitions", partitions);
        extra.put("transactions", transactionsDone);
        extra.put("transactions_per_s", transactionsDone / seconds);
        extra.put("transaction_duration_ms", transactions ? durationMs : 0);
        extra.put("transaction_records", transactions ? maxRecords : 0);
        out.println(GroupBench.line(
                name,
                sent,
                bytes,
                (endNs - startNs) / 1_000_000,
                bytes / (1024.0 * 1024.0) / seconds,
                sent / seconds,
                transactions ? commitUs : null,
                errors,
                extra));
        out.flush();
        return errors == 0 && sent == numRecords ? 0 : 1;
    }

    /** Aborts the transaction a failure left open; a failing abort is reported on stderr, the case already failed. */
    private static void abortQuietly(TxnClient.Producer p, String name) {
        try {
            p.abortTransaction();
        } catch (RuntimeException e) {
            System.err.println("txn-bench: " + name + ": the abort after the failure failed too: " + e);
        }
    }

    /** Commits the open transaction and returns how long the call took, in microseconds (at least 1). */
    private static long timedCommitUs(TxnClient.Producer p) {
        long t0 = System.nanoTime();
        p.commitTransaction();
        return Math.max(1, (System.nanoTime() - t0) / 1000);
    }

    /**
     * The values to send: the lines of {@code payloadFile} (UTF-8, empty lines skipped) or, without
     * one, 64 values of {@code recordSize} random A-Z bytes (seed 42): made once, so that neither
     * system's run spends CPU making payloads.
     */
    static List<byte[]> values(String payloadFile, int recordSize) {
        List<byte[]> values = new ArrayList<>();
        if (payloadFile != null) {
            try {
                for (String line : Files.readAllLines(Path.of(payloadFile), StandardCharsets.UTF_8)) {
                    if (!line.isEmpty()) {
                        values.add(line.getBytes(StandardCharsets.UTF_8));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read --payload-file " + payloadFile, e);
            }
            if (values.isEmpty()) {
                throw new IllegalArgumentException("--payload-file " + payloadFile + " holds no record");
            }
            return values;
        }
        Random random = new Random(42);
        for (int i = 0; i < 64; i++) {
            byte[] v = new byte[recordSize];
            for (int j = 0; j < recordSize; j++) {
                v[j] = (byte) ('A' + random.nextInt(26));
            }
            values.add(v);
        }
        return values;
    }

    // --- options (shared with CtpPipeline) -------------------------------------------------------

    TxnClient.Factory factory() {
        return factory;
    }

    Map<String, String> producerProps() {
        return producerProps;
    }

    Map<String, String> consumerProps() {
        return consumerProps;
    }

    PrintStream out() {
        return out;
    }

    String opt(String key, String dflt) {
        return opts.getOrDefault(key, dflt);
    }

    boolean flag(String key) {
        return Boolean.parseBoolean(opts.get(key));
    }

    String required(String key) {
        String v = opts.get(key);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("--" + key + " is required");
        }
        return v;
    }

    long longOpt(String key, long dflt) {
        String v = opts.get(key);
        try {
            return v == null ? dflt : Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + key + " wants an integer, got " + v, e);
        }
    }

    /** A suffix that makes a transactional id or group unique per bench run. */
    static String suffix() {
        return Long.toHexString(System.nanoTime());
    }
}
