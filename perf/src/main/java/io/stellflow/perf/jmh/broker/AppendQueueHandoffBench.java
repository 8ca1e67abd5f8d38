package io.stellflow.perf.jmh.broker;

import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.jctools.queues.MpscArrayQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Control;

/**
 * The event loop -> append agent hand-off: one producer thread offers, one consumer thread polls,
 * through a bounded JCTools {@link MpscArrayQueue} (what the broker uses), an {@link
 * ArrayBlockingQueue} (capacity 1024 entries, the per-partition append queue bound) or an
 * unbounded {@link ConcurrentLinkedQueue} (a fresh one per iteration; it allocates a node per
 * offer, which {@code -prof gc} shows). Both sides spin (with {@link Thread#onSpinWait}) on full or
 * empty until JMH stops the iteration, so the score is hand-offs per second on each side; on this
 * 2-core machine the two threads take both cores.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class AppendQueueHandoffBench {
    static final int CAPACITY = 1024;
    private static final Object ELEMENT = new Object();

    @Param({"jctools-mpsc", "array-blocking", "concurrent-linked"})
    public String queue;

    private Queue<Object> q;

    @Setup(Level.Iteration)
    public void setUp() {
        q = switch (queue) {
            case "jctools-mpsc" -> new MpscArrayQueue<>(CAPACITY);
            case "array-blocking" -> new ArrayBlockingQueue<>(CAPACITY);
            case "concurrent-linked" -> new ConcurrentLinkedQueue<>();
            default -> throw new IllegalArgumentException("unknown queue " + queue);
        };
    }

    @Benchmark
    @Group("handoff")
    @GroupThreads(1)
    public boolean offer(Control control) {
        while (!control.stopMeasurement) {
            if (q.offer(ELEMENT)) {
                return true;
            }
            Thread.onSpinWait();
        }
        return false;
    }

    @Benchmark
    @Group("handoff")
    @GroupThreads(1)
    public Object poll(Control control) {
        while (!control.stopMeasurement) {
            Object o = q.poll();
            if (o != null) {
                return o;
            }
            Thread.onSpinWait();
        }
        return null;
    }
}
