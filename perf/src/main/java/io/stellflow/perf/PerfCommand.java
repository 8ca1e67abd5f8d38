package io.stellflow.perf;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.stellflow.client.Callback;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.perf.data.Payloads;
import io.stellflow.protocol.Errors;
import io.stellflow.server.common.telemetry.MetricsEndpoint;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-perf.sh produce|consume}: the load generator, with flags close to Kafka's perf
 * tools. Prints one summary line (or one JSON object with {@code --json}) to stdout. Produce
 * latency is send-to-acknowledgement per record, counted from the time the record was due when
 * {@code --throughput} sets a fixed rate (coordinated-omission-aware); consume latency is the
 * duration of each {@code poll} that returned records; {@code end-to-end} is send-to-receive. {@code
 * produce --producers N} sends from N threads into one result. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-perf",
        mixinStandardHelpOptions = true,
        description = "Stellflow load generator.",
        subcommands = {
            PerfCommand.Produce.class,
            PerfCommand.Consume.class,
            EndToEnd.class,
            PerfCommand.Report.class,
            PayloadFileCommand.class
        })
public final class PerfCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(
                spec.commandLine(), "choose a subcommand: produce, consume, end-to-end, report or payload-file");
    }

    /** Options both subcommands share. */
    abstract static class Common {
        @Option(names = "--bootstrap-server", required = true, description = "host:port of a broker")
        String bootstrapServer;

        @Option(names = "--topic", required = true, description = "topic")
        String topic;

        @Option(
                names = "--num-records",
                defaultValue = "" + Long.MAX_VALUE,
                description = "stop after this many records")
        long numRecords;

        @Option(names = "--duration-ms", defaultValue = "-1", description = "stop after this long (-1: no limit)")
        long durationMs;

        @Option(names = "--json", description = "print the result as one JSON object")
        boolean json;

        @Option(names = "--name", description = "case name in the result (default: the subcommand)")
        String name;

        @Option(names = "--results-file", description = "append the result to this JSON array file")
        java.nio.file.Path resultsFile;

        @Option(
                names = "--metrics-port",
                description = "export the client's metrics (spec/metrics.md, Clients) on a Prometheus endpoint on"
                        + " 127.0.0.1 at this port (0 = any free port, printed on stderr)")
        Integer metricsPort;

        private MetricsEndpoint metricsEndpoint;

        /** The OpenTelemetry the clients report to: a Prometheus endpoint with --metrics-port, else none. */
        OpenTelemetry openTelemetry(String clientType) {
            if (metricsPort == null) {
                return null;
            }
            try {
                metricsEndpoint = MetricsEndpoint.start(
                        "127.0.0.1",
                        metricsPort,
                        Resource.getDefault()
                                .merge(Resource.create(Attributes.of(
                                        AttributeKey.stringKey("service.name"), "stellflow-perf-" + clientType))));
            } catch (java.io.UncheckedIOException e) {
                // One line and exit 1 (Cli's handler), not a stack trace: usually the port is taken.
                Throwable cause = e.getCause();
                throw new IllegalArgumentException("--metrics-port " + metricsPort + ": cannot listen on 127.0.0.1:"
                        + metricsPort + " (" + (cause == null ? e.getMessage() : cause.getMessage())
                        + "); give a free port, or 0 for any free one");
            }
            System.err.println(
                    "stellflow-perf: client metrics on http://127.0.0.1:" + metricsEndpoint.port() + "/metrics");
            return OpenTelemetrySdk.builder()
                    .setMeterProvider(metricsEndpoint.meterProvider())
                    .build();
        }

        /** Stops the metrics endpoint, if any. */
        void closeMetrics() {
            if (metricsEndpoint != null) {
                metricsEndpoint.close();
            }
        }

        @Spec
        CommandLine.Model.CommandSpec spec;

        /** Checks --num-records and --duration-ms before anything connects (usage errors, exit 2). */
        void validateLimits() {
            if (numRecords < 1) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--num-records must be at least 1, got " + numRecords);
            }
            if (durationMs < -1 || durationMs == 0) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--duration-ms must be at least 1 (or -1: no limit), got " + durationMs);
            }
            if (numRecords == Long.MAX_VALUE && durationMs < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "give --num-records or --duration-ms");
            }
        }

        long deadlineNs(long startNs) {
            return durationMs < 0 ? Long.MAX_VALUE : startNs + TimeUnit.MILLISECONDS.toNanos(durationMs);
        }

        void print(PerfResult r) {
            PrintWriter out = spec.commandLine().getOut();
            out.println(json ? r.toJson() : r.toText());
            out.flush();
            if (resultsFile != null) {
                try {
                    ResultsFile.append(resultsFile, r);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException("cannot write " + resultsFile, e);
                }
            }
        }
    }

    @Command(
            name = "produce",
            mixinStandardHelpOptions = true,
            description = "Send fixed-size records as fast as allowed.")
    static final class Produce extends Common implements Callable<Integer> {
        /** Latency per acknowledged measured record, microseconds (written by the client's I/O thread). */
        private final Recorder latencyUs = new Recorder(3);
        /** Records that failed, warm-up included. */
        private final AtomicLong errors = new AtomicLong();
        /** Value bytes of the acknowledged measured records (uncompressed: what the application sent). */
        private final AtomicLong ackedBytes = new AtomicLong();
        /** The first failure, printed on stderr at the end (the count alone does not say why). */
        private final AtomicReference<Exception> firstError = new AtomicReference<>();

        /**
         * One record's completion: its latency when it is measured, else nothing; an error counts
         * always (a failed warm-up record makes the run unclean too). One object per record, as Kafka's
         * ProducerPerformance has one callback per record.
         */
        private final class Acked implements Callback {
            private final long sendNs;
            private final boolean measured;
            private final int bytes;

            Acked(long sendNs, boolean measured, int bytes) {
                this.sendNs = sendNs;
                this.measured = measured;
                this.bytes = bytes;
            }

            @Override
            public void onCompletion(RecordMetadata metadata, Exception exception) {
                if (exception != null) {
                    errors.incrementAndGet();
                    firstError.compareAndSet(null, exception);
                } else if (measured) { // one latency per acknowledged record: the count too
                    latencyUs.recordValue(Math.max(1, (System.nanoTime() - sendNs) / 1000));
                    ackedBytes.addAndGet(bytes);
                }
            }
        }

        /** At a fixed rate, park only when the next record is due at least this far ahead (1 ms). */
        static final long PACING_PARK_MIN_NS = 1_000_000;

        @Option(
                names = "--record-size",
                defaultValue = "1024",
                description = "value bytes per record (default ${DEFAULT-VALUE}); with --payload json-logs the"
                        + " most bytes of a record")
        int recordSize;

        @Option(
                names = "--payload",
                defaultValue = "random",
                description = "record values: 'random' (one value of --record-size random bytes, sent again"
                        + " and again; default) or 'json-logs' (--payload-records JSON log records of up to"
                        + " --record-size bytes from a fixed seed, about 3 lines each, sent in turn;"
                        + " realistic for compression, docs/compression.md)")
        String payload;

        @Option(
                names = "--payload-file",
                description = "record values from this file, one per line (as Kafka's ProducerPerformance"
                        + " --payload-file), sent in turn; write one with 'stellflow-perf payload-file'."
                        + " Overrides --payload and --record-size")
        java.nio.file.Path payloadFile;

        @Option(
                names = "--payload-records",
                defaultValue = "" + PayloadFileCommand.DEFAULT_RECORDS,
                description = "distinct records of --payload json-logs (default ${DEFAULT-VALUE}: about 8.5 MB"
                        + " of 1 KiB records, more than a batch or a codec's window holds, so a batch never"
                        + " compresses one record against its own earlier copy)")
        int payloadRecords;

        @Option(names = "--throughput", defaultValue = "-1", description = "records/s cap, -1 for none")
        long throughput;

        @Option(
                names = "--producer-props",
                arity = "1..*",
                description = "producer properties k=v ..., e.g. acks=all batch.size=1048576 linger.ms=5"
                        + " compression.type=zstd compression.zstd.level=3 (docs/compression.md)")
        Map<String, String> producerProps = new HashMap<>();

        @Option(
                names = "--latency-from",
                defaultValue = "due",
                description =
                        "at a fixed --throughput, count latency from the time a record was 'due' (default,"
                                + " coordinated-omission-aware) or from the actual 'send' (what Kafka's ProducerPerformance does)")
        String latencyFrom;

        @Option(
                names = "--warmup-records",
                defaultValue = "0",
                description = "the first N of --num-records are sent the same way but left out of the"
                        + " result (throughput clock, latencies, counts), like Kafka's ProducerPerformance"
                        + " --warmup-records (default ${DEFAULT-VALUE})")
        long warmupRecords;

        @Option(
                names = "--producers",
                defaultValue = "1",
                description = "sender threads (default ${DEFAULT-VALUE}); each sends its share of --num-records,"
                        + " --warmup-records and --throughput (split as evenly as possible). They share one"
                        + " producer, as the threads of a Kafka application usually share one thread-safe"
                        + " KafkaProducer (one connection per broker, batches filled by every thread): what a"
                        + " Kafka user expects. Kafka's ProducerPerformance has one thread and one producer,"
                        + " which the default matches. See --producer-per-thread")
        int producers;

        @Option(
                names = "--producer-per-thread",
                description = "give each --producers thread its own producer (own connections, batches and"
                        + " sender thread, as end-to-end does) instead of the one shared producer")
        boolean producerPerThread;

        @Override
        public Integer call() throws InterruptedException {
            validateLimits();
            if (recordSize < 0) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--record-size must be at least 0, got " + recordSize);
            }
            if (!latencyFrom.equals("due") && !latencyFrom.equals("send")) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--latency-from must be due or send");
            }
            boolean fromDue = latencyFrom.equals("due");
            byte[][] value = values();
            if (warmupRecords < 0 || warmupRecords >= numRecords) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--warmup-records must be in [0, --num-records)");
            }
            if (producers < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--producers must be >= 1");
            }
            int clientCount = producerPerThread ? producers : 1;
            if (clientCount > 1 && metricsPort != null) {
                // The producers' instruments would report the same series; the export would keep one.
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--metrics-port exports one producer: not with --producer-per-thread");
            }
            long startNs;
            long measuredStartNs;
            long endNs;
            OpenTelemetry otel = openTelemetry("producer");
            List<StellflowProducer> clients = new ArrayList<>(clientCount);
            try {
                for (int i = 0; i < clientCount; i++) {
                    clients.add(new StellflowProducer(Cli.producerProps(bootstrapServer, producerProps), otel));
                    clients.get(i).partitionsFor(topic); // metadata before the clock starts
                }
                startNs = System.nanoTime();
                long deadlineNs = deadlineNs(startNs);
                if (producers == 1) { // on this thread, as before --producers: nothing shared per record
                    double intervalNs = throughput > 0 ? 1e9 / throughput : 0;
                    measuredStartNs = sendRecords(
                            clients.get(0), value, numRecords, warmupRecords, startNs, deadlineNs, intervalNs, fromDue);
                } else {
                    measuredStartNs = sendOnThreads(clients, value, startNs, deadlineNs, fromDue);
                }
                if (measuredStartNs == Long.MAX_VALUE) {
                    measuredStartNs = startNs; // stopped in the warm-up: nothing measured
                }
                for (StellflowProducer producer : clients) {
                    producer.flush();
                }
                endNs = System.nanoTime();
            } finally {
                for (StellflowProducer producer : clients) {
                    producer.close();
                }
            }
            closeMetrics();
            Histogram h = latencyUs.getIntervalHistogram();
            long acked = h.getTotalCount();
            PerfResult r = PerfResult.of(
                    name != null ? name : "produce",
                    acked,
                    ackedBytes.get(),
                    endNs - measuredStartNs,
                    h,
                    errors.get(),
                    producers);
            print(r);
            Exception first = firstError.get();
            if (first != null) {
                System.err.println(errors.get() + " record(s) failed; the first: " + first.getMessage());
            }
            return errors.get() == 0 ? 0 : 1;
        }

        /** The values to send in turn (see --payload, --payload-file). */
        private byte[][] values() {
            if (payloadFile != null) {
                try {
                    return Payloads.fromFile(payloadFile);
                } catch (java.io.IOException e) {
                    throw new CommandLine.ParameterException(
                            spec.commandLine(),
                            "--payload-file " + payloadFile + ": cannot read it: " + e.getMessage());
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
                }
            }
            switch (payload) {
                case "random" -> {
                    byte[] value = new byte[recordSize];
                    new SplittableRandom(42).nextBytes(value);
                    return new byte[][] {value};
                }
                case "json-logs" -> {
                    if (payloadRecords < 1 || recordSize < 1) {
                        throw new CommandLine.ParameterException(
                                spec.commandLine(), "--payload-records and --record-size must be >= 1");
                    }
                    return Payloads.jsonLogRecords(42, payloadRecords, recordSize);
                }
                default ->
                    throw new CommandLine.ParameterException(
                            spec.commandLine(), "--payload must be random or json-logs, not " + payload);
            }
        }

        /**
         * The hot loop: sends {@code count} records, the first {@code warmup} of them left out of the
         * result, the k-th due at {@code startNs + k * intervalNs} when {@code intervalNs > 0}. Every
         * sender thread runs it with its own counters; per record it shares only the producer and the
         * thread-safe {@link Recorder} and counters its callbacks write (as with one thread).
         *
         * @return when the warm-up ended (the first measured record), {@code startNs} without warm-up,
         *     or {@link Long#MAX_VALUE} when the loop stopped before its warm-up ended
         */
        private long sendRecords(
                StellflowProducer producer,
                byte[][] values,
                long count,
                long warmup,
                long startNs,
                long deadlineNs,
                double intervalNs,
                boolean fromDue) {
            long sent = 0;
            int nextValue = 0; // values in turn; a counter, not a division per record
            long measuredStartNs = warmup > 0 ? Long.MAX_VALUE : startNs;
            while (sent < count) {
                // One clock read per record unthrottled (the deadline, the send time); the loop
                // used to read it twice, a few percent of the tool's CPU at 400,000 records/s.
                long nowNs = System.nanoTime();
                if (nowNs >= deadlineNs) {
                    break;
                }
                if (sent == warmup && sent > 0) {
                    measuredStartNs = nowNs; // the warm-up is over: the result starts here
                }
                boolean measured = sent >= warmup;
                // At a fixed rate the latency counts from when the record was due, not from when
                // the (possibly late) send happened: no coordinated omission. The sender parks only
                // when at least PACING_PARK_MIN_NS ahead and then sends what is due in one burst,
                // as Kafka's ProducerPerformance does (its throttler sleeps in 2 ms steps): a park
                // per record (20,000 wake-ups a second) cost more CPU than the broker under test. A
                // record sent before it was due counts from its send.
                long sendNs;
                if (intervalNs > 0) {
                    long dueNs = startNs + (long) (sent * intervalNs);
                    long waitNs = dueNs - nowNs;
                    if (waitNs >= PACING_PARK_MIN_NS) {
                        LockSupport.parkNanos(waitNs);
                        nowNs = System.nanoTime();
                    }
                    sendNs = fromDue ? Math.min(dueNs, nowNs) : nowNs; // late: from due; early: from the send
                } else {
                    sendNs = nowNs;
                }
                byte[] value = values[nextValue];
                if (++nextValue == values.length) {
                    nextValue = 0;
                }
                producer.send(new ProducerRecord(topic, null, null, value), new Acked(sendNs, measured, value.length));
                sent++;
            }
            return measuredStartNs;
        }

        /**
         * Runs {@link #sendRecords} on {@code producers} threads and waits for them. Thread i sends the
         * records i, i + producers, i + 2 * producers, ... of one schedule: with a fixed {@code
         * --throughput} the k-th record overall is due at {@code startNs + k / throughput}, as with one
         * thread. Thread i uses {@code clients.get(i % clients.size())}.
         *
         * @return the earliest start of a thread's measured records, or {@link Long#MAX_VALUE}
         */
        private long sendOnThreads(
                List<StellflowProducer> clients, byte[][] value, long startNs, long deadlineNs, boolean fromDue)
                throws InterruptedException {
            double intervalNs = throughput > 0 ? 1e9 * producers / throughput : 0;
            long[] measuredStartNs = new long[producers]; // each slot written by its thread, read after join
            Throwable[] failures = new Throwable[producers];
            Thread[] threads = new Thread[producers];
            for (int i = 0; i < producers; i++) {
                int id = i;
                StellflowProducer producer = clients.get(i % clients.size());
                long count = share(numRecords, i);
                long warmup = share(warmupRecords, i);
                long firstDueNs = startNs + (long) (intervalNs * i / producers);
                threads[i] = Thread.ofPlatform().name("perf-producer-" + i).start(() -> {
                    try {
                        measuredStartNs[id] = sendRecords(
                                producer, value, count, warmup, firstDueNs, deadlineNs, intervalNs, fromDue);
                    } catch (RuntimeException | Error e) {
                        failures[id] = e;
                    }
                });
            }
            long earliestNs = Long.MAX_VALUE;
            for (int i = 0; i < producers; i++) {
                threads[i].join();
                earliestNs = Math.min(earliestNs, measuredStartNs[i]);
            }
            for (int i = 0; i < producers; i++) {
                if (failures[i] != null) {
                    throw new IllegalStateException("producer thread " + i + " failed", failures[i]);
                }
            }
            return earliestNs;
        }

        /** Thread i's share of {@code total} records: the first {@code total % producers} threads get one more. */
        private long share(long total, int i) {
            if (total == Long.MAX_VALUE) {
                return total; // no --num-records: every thread sends until --duration-ms
            }
            return total / producers + (i < total % producers ? 1 : 0);
        }
    }

    @Command(
            name = "consume",
            mixinStandardHelpOptions = true,
            description = "Read a topic from the beginning as fast as possible (--group: as a group member).")
    static final class Consume extends Common implements Callable<Integer> {
        @Option(names = "--consumer-props", arity = "1..*", description = "consumer properties k=v ...")
        Map<String, String> consumerProps = new HashMap<>();

        @Option(
                names = "--timeout-ms",
                defaultValue = "10000",
                description = "stop when no record arrived for this long (ms, default ${DEFAULT-VALUE}); short of"
                        + " --num-records, that is an error (exit 1)")
        long timeoutMs;

        @Option(
                names = "--group",
                description = "consume as a member of this consumer group (subscribe; the coordinator assigns the"
                        + " partitions, positions start at the group's committed offsets, else the earliest; the"
                        + " clock includes joining; on exit it commits the offset after the last record counted, so"
                        + " a --num-records cut inside a poll is read again by the next run). Use a new group per"
                        + " run to read the topic again")
        String group;

        @Override
        public Integer call() {
            validateLimits();
            Properties props = Cli.clientProps(bootstrapServer, consumerProps);
            if (group != null) {
                if (group.isEmpty()) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--group must not be empty");
                }
                props.setProperty("group.id", group);
                props.putIfAbsent("auto.offset.reset", "earliest");
            }
            List<TopicPartition> partitions = new ArrayList<>();
            try (StellflowAdmin admin = StellflowAdmin.besideClient(props)) {
                TopicDescription d = admin.describeTopics(List.of(topic)).get(topic);
                if (d == null || d.errorCode() != Errors.NONE) {
                    throw new StellflowException(Errors.UNKNOWN_TOPIC_OR_PARTITION, "cannot read topic " + topic);
                }
                d.partitions().forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            }
            Histogram pollUs = new Histogram(3);
            long records = 0;
            long bytes = 0;
            long startNs;
            long lastDataNs;
            boolean idleTimedOut = false;
            OpenTelemetry otel = openTelemetry("consumer");
            try (StellflowConsumer consumer = new StellflowConsumer(props, otel)) {
                if (group != null) {
                    consumer.subscribe(List.of(topic));
                } else {
                    consumer.assign(partitions);
                    consumer.seekToBeginning(partitions);
                }
                startNs = System.nanoTime();
                lastDataNs = startNs;
                long deadlineNs = deadlineNs(startNs);
                while (records < numRecords) {
                    long t0 = System.nanoTime();
                    if (t0 >= deadlineNs) {
                        break;
                    }
                    if (t0 - lastDataNs > TimeUnit.MILLISECONDS.toNanos(timeoutMs)) {
                        idleTimedOut = true;
                        break;
                    }
                    List<ConsumerRecord> got = consumer.poll(Duration.ofMillis(100));
                    if (got.isEmpty()) {
                        continue;
                    }
                    lastDataNs = System.nanoTime();
                    pollUs.recordValue(Math.max(1, (lastDataNs - t0) / 1000));
                    // Count at most --num-records; a group member seeks back to the first record
                    // not counted, so the commit made on close covers exactly the counted records.
                    int take = (int) Math.min(got.size(), numRecords - records);
                    for (int i = 0; i < take; i++) {
                        ConsumerRecord r = got.get(i);
                        records++;
                        bytes += r.value() == null ? 0 : r.value().length;
                    }
                    if (take < got.size()) {
                        consumer.seekBack(got.subList(take, got.size()));
                    }
                }
            }
            closeMetrics();
            PerfResult r =
                    PerfResult.of(name != null ? name : "consume", records, bytes, lastDataNs - startNs, pollUs, 0);
            print(r);
            if (idleTimedOut && numRecords != Long.MAX_VALUE) {
                // Fewer records than asked for: say so and fail, so a script does not take a short
                // read for a full one (it used to exit 0 after waiting --timeout-ms in silence).
                PrintWriter err = spec.commandLine().getErr();
                err.println("error: read " + records + " of --num-records " + numRecords + ": no record arrived for "
                        + timeoutMs + " ms (--timeout-ms); the topic may hold fewer records");
                err.flush();
                return 1;
            }
            return 0;
        }
    }

    @Command(name = "report", mixinStandardHelpOptions = true, description = "Print a results file as a table.")
    static final class Report implements Callable<Integer> {
        @Option(names = "--results-file", required = true, description = "JSON array written by --results-file")
        java.nio.file.Path resultsFile;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws java.io.IOException {
            PrintWriter out = spec.commandLine().getOut();
            out.print(ResultsFile.table(ResultsFile.read(resultsFile)));
            out.flush();
            return 0;
        }
    }

    public static void main(String[] args) {
        System.exit(Cli.commandLine(new PerfCommand()).execute(args));
    }
}
