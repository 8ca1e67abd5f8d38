package io.stellflow.perf;

import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import java.nio.ByteBuffer;
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
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stellflow-perf.sh end-to-end}: latency from send to receive, with the consumer in the same
 * process. Each record's value starts with the {@link System#nanoTime()} at which it was
 * <em>due</em> to be sent (the fixed {@code --throughput} schedule), so a stall in the producer,
 * the broker or the consumer shows up in the latency of every record that was due during the stall
 * (coordinated-omission-aware; values in an HdrHistogram {@link Recorder}, microseconds). Without a
 * throughput cap the due time is the actual send time. {@code --producers} threads each own a
 * producer and send {@code throughput / producers} records/s. One invocation; not thread-safe.
 */
@Command(
        name = "end-to-end",
        mixinStandardHelpOptions = true,
        description = "Send at a fixed rate and measure send-to-receive latency with an in-process consumer.")
final class EndToEnd extends PerfCommand.Common implements Callable<Integer> {
    /** Bytes of the due-time stamp at the start of each value. */
    private static final int STAMP_BYTES = Long.BYTES;

    @Option(names = "--record-size", defaultValue = "1024", description = "value bytes per record, >= 8")
    int recordSize;

    @Option(names = "--throughput", defaultValue = "10000", description = "records/s for all producers, -1 for none")
    long throughput;

    @Option(names = "--producers", defaultValue = "1", description = "producer threads, each with its own producer")
    int producers;

    @Option(
            names = "--producer-props",
            arity = "1..*",
            description = "producer properties k=v ..., e.g. acks=all batch.size=1048576 linger.ms=5"
                    + " compression.type=zstd compression.zstd.level=3 (docs/compression.md)")
    Map<String, String> producerProps = new HashMap<>();

    @Option(names = "--consumer-props", arity = "1..*", description = "consumer properties k=v ...")
    Map<String, String> consumerProps = new HashMap<>();

    @Option(
            names = "--timeout-ms",
            defaultValue = "10000",
            description = "after sending, wait this long for the last records")
    long timeoutMs;

    @Override
    public Integer call() throws InterruptedException {
        validateLimits();
        if (recordSize < STAMP_BYTES || producers < 1) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--record-size must be >= 8 and --producers >= 1");
        }
        List<TopicPartition> partitions = partitions();
        Recorder latencyUs = new Recorder(3);
        AtomicLong sent = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        long received = 0;
        long startNs;
        long endNs;
        try (StellflowConsumer consumer = new StellflowConsumer(Cli.clientProps(bootstrapServer, consumerProps))) {
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position); // resolve the end offsets before sending
            startNs = System.nanoTime();
            long perProducer = numRecords == Long.MAX_VALUE ? Long.MAX_VALUE : numRecords / producers;
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < producers; i++) {
                long mine = perProducer == Long.MAX_VALUE
                        ? perProducer
                        : perProducer + (i < numRecords % producers ? 1 : 0);
                int seed = i;
                threads.add(Thread.ofPlatform()
                        .name("e2e-producer-" + i)
                        .start(() -> produce(seed, mine, startNs, sent, errors)));
            }
            long lastDataNs = System.nanoTime();
            long timeoutNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (true) {
                boolean producing = threads.stream().anyMatch(Thread::isAlive);
                long expected = producing ? Long.MAX_VALUE : sent.get() - errors.get();
                if (received >= expected || (!producing && System.nanoTime() - lastDataNs > timeoutNs)) {
                    break;
                }
                List<ConsumerRecord> got = consumer.poll(Duration.ofMillis(50));
                long nowNs = System.nanoTime();
                for (ConsumerRecord r : got) {
                    byte[] v = r.value();
                    if (v != null && v.length >= STAMP_BYTES) {
                        long dueNs = ByteBuffer.wrap(v).getLong(0);
                        latencyUs.recordValue(Math.max(1, (nowNs - dueNs) / 1000));
                        received++;
                    }
                }
                if (!got.isEmpty()) {
                    lastDataNs = nowNs;
                }
            }
            for (Thread t : threads) {
                t.join();
            }
            endNs = lastDataNs;
        }
        Histogram h = latencyUs.getIntervalHistogram();
        long lost = sent.get() - errors.get() - received;
        print(PerfResult.of(
                name != null ? name : "end-to-end",
                received,
                received * recordSize,
                endNs - startNs,
                h,
                errors.get() + Math.max(0, lost),
                producers));
        return errors.get() == 0 && lost <= 0 ? 0 : 1;
    }

    private List<TopicPartition> partitions() {
        Properties props = Cli.clientProps(bootstrapServer, consumerProps);
        List<TopicPartition> out = new ArrayList<>();
        try (StellflowAdmin admin = StellflowAdmin.besideClient(props)) {
            TopicDescription d = admin.describeTopics(List.of(topic)).get(topic);
            if (d == null || d.errorCode() != Errors.NONE) {
                throw new StellflowException(Errors.UNKNOWN_TOPIC_OR_PARTITION, "cannot read topic " + topic);
            }
            d.partitions().forEach(p -> out.add(new TopicPartition(topic, p.partition())));
        }
        return out;
    }

    /** One producer thread: sends {@code count} records on its share of the schedule. */
    private void produce(int seed, long count, long startNs, AtomicLong sent, AtomicLong errors) {
        byte[] template = new byte[recordSize];
        new SplittableRandom(42 + seed).nextBytes(template);
        double intervalNs = throughput > 0 ? 1e9 * producers / throughput : 0;
        long deadlineNs = deadlineNs(startNs);
        try (StellflowProducer producer = new StellflowProducer(Cli.producerProps(bootstrapServer, producerProps))) {
            producer.partitionsFor(topic);
            // Stagger the threads over one interval so that they do not all send at the same instant.
            long firstNs = startNs + (long) (intervalNs * seed / producers);
            for (long i = 0; i < count; i++) {
                long dueNs = intervalNs > 0 ? firstNs + (long) (i * intervalNs) : System.nanoTime();
                if (dueNs >= deadlineNs || System.nanoTime() >= deadlineNs) {
                    break;
                }
                long waitNs = dueNs - System.nanoTime();
                if (waitNs > 0) {
                    LockSupport.parkNanos(waitNs);
                }
                // A fresh array per record: the producer may hold the value until the batch is built.
                byte[] value = template.clone();
                ByteBuffer.wrap(value).putLong(0, dueNs);
                producer.send(new ProducerRecord(topic, null, null, value)).whenComplete((md, e) -> {
                    if (e != null) {
                        errors.incrementAndGet();
                    }
                });
                sent.incrementAndGet();
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
