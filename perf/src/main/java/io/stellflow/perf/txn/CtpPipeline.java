package io.stellflow.perf.txn;

import io.stellflow.perf.groups.GroupBench;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * {@link TxnBench}'s {@code ctp} case: consume-transform-produce latency, three clients in one JVM so
 * that {@code System.nanoTime()} stamps compare.
 *
 * <ul>
 *   <li>input: an idempotent producer (no transactions) sends {@code --rate} records/s (2000) of
 *       {@code --record-size} bytes (1024) to {@code --input-topic}, record i to partition {@code i %
 *       partitions}, each stamped with its send instant and number ({@link TxnStamp});
 *   <li>app: a consumer of group {@code --group} subscribed to the input topic and a producer; per poll
 *       that returned records: {@code beginTransaction}, one output record per input record (a copy of
 *       its value, stamp kept) to the same partition of {@code --output-topic}, {@code
 *       sendOffsetsToTransaction} (the consumer's positions of the partitions it read),
 *       {@code commitTransaction}; consumer {@code read_committed}. {@code --plain}: the same
 *       pipeline without transactions (idempotent producer, {@code commitAsync} of the positions,
 *       consumer {@code read_uncommitted}), the baseline;
 *   <li>output: a consumer without a group reads every output partition ({@code read_committed}, or
 *       {@code read_uncommitted} with {@code --plain}) and records, per record, now minus its stamp.
 * </ul>
 *
 * Timing: the input runs from the start; once the first output record arrived (the group joined,
 * the first transaction committed) {@code --warmup-ms} (5000) pass unrecorded, then records sent in
 * the next {@code --duration-ms} (10000) are the measured ones; after that the input stops and the
 * output gets up to {@code --drain-ms} (30000) to deliver every measured record. The line's
 * latencies are over the measured records (HdrHistogram, microseconds; p50/p99/p99.9 in ms), {@code
 * records} the measured records received, {@code errors} the measured records missing plus output
 * records seen twice plus failed sends; extra fields {@code sent}, {@code missing}, {@code
 * duplicates}, {@code transactions} (commits, or async offset commits with {@code --plain}). A
 * failure of a client thread ends the case with an error.
 *
 * <p>Thread-safety: {@link #run} is called once, by one thread; it owns three threads, each owning
 * one client's calls, and shares with them only the atomics and the volatile window below.
 */
final class CtpPipeline {
    /** The measured window of send instants, {@code [startNs, endNs)}; none while not yet known. */
    private record Window(long startNs, long endNs) {
        boolean holds(long sentNs) {
            return sentNs >= startNs && sentNs < endNs;
        }
    }

    private static final Window NOT_YET = new Window(Long.MAX_VALUE, Long.MAX_VALUE);

    private final TxnBench bench;
    private final String bootstrap;
    private final String inputTopic;
    private final String outputTopic;
    private final String name;
    private final String group;
    private final int partitions;
    private final int recordSize;
    private final long rate;
    private final boolean plain;

    private volatile Window window = NOT_YET;
    private volatile boolean stopInput;
    private volatile boolean stopApp;
    private volatile boolean stopOutput;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong measuredSent = new AtomicLong();
    private final AtomicLong measuredReceived = new AtomicLong();
    private final AtomicLong firstOutputNs = new AtomicLong(-1);
    private final AtomicLong sendErrors = new AtomicLong();
    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    /** Written by the output thread only; read by {@link #run} after that thread ended. */
    private final Histogram latencyUs = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);

    CtpPipeline(TxnBench bench) {
        this.bench = bench;
        this.bootstrap = bench.required("bootstrap-server");
        this.inputTopic = bench.required("input-topic");
        this.outputTopic = bench.required("output-topic");
        this.name = bench.opt("name", "ctp-" + inputTopic);
        this.group = bench.opt("group", "ctp-" + name + "-" + TxnBench.suffix());
        this.partitions = (int) bench.longOpt("partitions", 1);
        this.recordSize = (int) bench.longOpt("record-size", 1024);
        this.rate = bench.longOpt("rate", 2000);
        this.plain = bench.flag("plain");
        if (partitions <= 0 || rate <= 0 || recordSize < TxnStamp.BYTES) {
            throw new IllegalArgumentException("--partitions and --rate must be > 0 and --record-size >= "
                    + TxnStamp.BYTES + ", got " + partitions + ", " + rate + ", " + recordSize);
        }
    }

    int run() throws InterruptedException {
        long warmupNs = TimeUnit.MILLISECONDS.toNanos(bench.longOpt("warmup-ms", 5000));
        long durationNs = TimeUnit.MILLISECONDS.toNanos(bench.longOpt("duration-ms", 10_000));
        long drainNs = TimeUnit.MILLISECONDS.toNanos(bench.longOpt("drain-ms", 30_000));
        long firstTimeoutNs = TimeUnit.MILLISECONDS.toNanos(bench.longOpt("timeout-ms", 120_000));
        if (durationNs <= 0 || warmupNs < 0) {
            throw new IllegalArgumentException("--duration-ms must be > 0 and --warmup-ms >= 0");
        }
        Thread output = thread("ctp-output", this::output);
        Thread app = thread("ctp-app", this::app);
        Thread input = thread("ctp-input", this::input);
        output.start();
        app.start();
        input.start();
        long errors = 0;
        long deadline = System.nanoTime() + firstTimeoutNs;
        while (firstOutputNs.get() < 0 && failure.get() == null && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        if (firstOutputNs.get() >= 0 && failure.get() == null) {
            long start = System.nanoTime() + warmupNs;
            window = new Window(start, start + durationNs);
            sleepUntil(start + durationNs);
        } else if (failure.get() == null) {
            failure.compareAndSet(
                    null,
                    new IllegalStateException("no output record within " + TimeUnit.NANOSECONDS.toMillis(firstTimeoutNs)
                            + " ms (did the app's group get the partitions?)"));
        }
        stopInput = true;
        input.join();
        long drainEnd = System.nanoTime() + drainNs;
        while (measuredReceived.get() < measuredSent.get() && failure.get() == null && System.nanoTime() < drainEnd) {
            Thread.sleep(5);
        }
        stopApp = true;
        app.join();
        stopOutput = true;
        output.join();

        long sent = measuredSent.get();
        long received = measuredReceived.get();
        long missing = Math.max(0, sent - received);
        errors += missing + duplicates.get() + sendErrors.get();
        if (failure.get() != null) {
            System.err.println("txn-bench: " + name + " failed: " + failure.get());
            failure.get().printStackTrace(System.err);
            errors++;
        }
        double seconds = durationNs / 1e9;
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("mode", plain ? "plain" : "transactional");
        extra.put("partitions", partitions);
        extra.put("rate", rate);
        extra.put("sent", sent);
        extra.put("missing", missing);
        extra.put("duplicates", duplicates.get());
        extra.put("transactions", commits.get());
        bench.out()
                .println(GroupBench.line(
                        name,
                        received,
                        received * recordSize,
                        TimeUnit.NANOSECONDS.toMillis(durationNs),
                        received * (double) recordSize / (1024.0 * 1024.0) / seconds,
                        received / seconds,
                        latencyUs,
                        errors,
                        extra));
        bench.out().flush();
        return errors == 0 && received > 0 ? 0 : 1;
    }

    // --- the three clients --------------------------------------------------------------------------

    /** The input producer: paced sends, each stamped at its send; counts the sends in the window. */
    private void input() {
        byte[] template = TxnBench.values(null, recordSize).get(0);
        long intervalNs = Math.max(1, 1_000_000_000L / rate);
        TxnClient.SendCallback callback = e -> {
            if (e != null) {
                sendErrors.incrementAndGet();
            }
        };
        try (TxnClient.Producer p = bench.factory().producer(bootstrap, null, inputProps())) {
            long next = System.nanoTime();
            for (long seq = 0; !stopInput && failure.get() == null; seq++) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                next += intervalNs;
                byte[] v = template.clone();
                long now = System.nanoTime();
                TxnStamp.write(v, now, seq);
                p.send(inputTopic, (int) (seq % partitions), null, v, callback);
                if (window.holds(now)) {
                    measuredSent.incrementAndGet();
                }
            }
            p.flush();
        }
    }

    /** The input producer takes the producer properties without a transactional id. */
    private Map<String, String> inputProps() {
        Map<String, String> props = new HashMap<>(bench.producerProps());
        props.remove("transactional.id");
        return props;
    }

    /** The application: consume, transform, produce, and commit the consumed positions. */
    private void app() {
        String transactionalId = plain ? null : bench.opt("transactional-id", "ctp-" + name + "-" + TxnBench.suffix());
        List<byte[]> values = new ArrayList<>();
        List<Integer> valuePartitions = new ArrayList<>();
        TxnClient.SendCallback callback = e -> {
            if (e != null) {
                sendErrors.incrementAndGet();
            }
        };
        try (TxnClient.Consumer c = bench.factory().consumer(bootstrap, group, !plain, bench.consumerProps());
                TxnClient.Producer p = bench.factory().producer(bootstrap, transactionalId, bench.producerProps())) {
            if (!plain) {
                p.initTransactions();
            }
            c.subscribe(inputTopic);
            Map<Integer, Long> offsets = new HashMap<>();
            while (!stopApp && failure.get() == null) {
                values.clear();
                valuePartitions.clear();
                int n = c.poll(100, (partition, offset, value) -> {
                    values.add(value);
                    valuePartitions.add(partition);
                });
                if (n == 0) {
                    continue;
                }
                offsets.clear();
                if (!plain) {
                    p.beginTransaction();
                }
                for (int i = 0; i < values.size(); i++) {
                    int partition = valuePartitions.get(i);
                    p.send(outputTopic, partition, null, values.get(i).clone(), callback);
                    offsets.putIfAbsent(partition, 0L);
                }
                for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
                    e.setValue(c.position(inputTopic, e.getKey()));
                }
                if (plain) {
                    c.commitAsync(inputTopic, offsets);
                } else {
                    p.sendOffsetsToTransaction(inputTopic, offsets, c);
                    p.commitTransaction();
                }
                commits.incrementAndGet();
            }
        }
    }

    /** The output consumer: latency of each record, duplicates by input number. */
    private void output() {
        BitSet seen = new BitSet();
        try (TxnClient.Consumer c = bench.factory().consumer(bootstrap, null, !plain, bench.consumerProps())) {
            c.assign(outputTopic, partitions);
            TxnClient.RecordSink sink = (partition, offset, value) -> {
                long now = System.nanoTime();
                long sentNs = TxnStamp.sentNs(value);
                long seq = TxnStamp.sequence(value);
                if (seq < 0 || seq > Integer.MAX_VALUE) {
                    throw new IllegalStateException(
                            "output record at " + partition + "/" + offset + " carries input number " + seq);
                }
                if (seen.get((int) seq)) {
                    duplicates.incrementAndGet();
                    return;
                }
                seen.set((int) seq);
                firstOutputNs.compareAndSet(-1, now);
                if (window.holds(sentNs)) {
                    latencyUs.recordValue(Math.max(0, (now - sentNs) / 1000));
                    measuredReceived.incrementAndGet();
                }
            };
            while (!stopOutput && failure.get() == null) {
                c.poll(100, sink);
            }
        }
    }

    private Thread thread(String threadName, Runnable body) {
        Thread t = new Thread(
                () -> {
                    try {
                        body.run();
                    } catch (Throwable e) { // every client failure ends the case as an error
                        failure.compareAndSet(null, e);
                    }
                },
                threadName);
        t.setDaemon(true);
        return t;
    }

    /** Sleeps until {@code deadlineNs} or until a client thread failed. */
    private void sleepUntil(long deadlineNs) throws InterruptedException {
        long left;
        while ((left = deadlineNs - System.nanoTime()) > 0 && failure.get() == null) {
            Thread.sleep(Math.max(1, Math.min(100, TimeUnit.NANOSECONDS.toMillis(left))));
        }
    }
}
