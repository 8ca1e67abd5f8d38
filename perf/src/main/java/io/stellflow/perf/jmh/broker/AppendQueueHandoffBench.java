package io.stellflow.perf.jmh.broker;

import java.util.AbstractQueue;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * ArrayBlockingQueue} (capacity 1024 entries, the per-partition append queue bound), an unbounded
 * {@link ConcurrentLinkedQueue} (a fresh one per iteration; it allocates a node per offer, which
 * {@code -prof gc} shows), or the same queue bounded at 1024 by an atomic count
 * ({@code concurrent-linked-bounded}: the broker needs a bound for back-pressure, and this is what
 * a bound costs on top of that queue). Both sides spin (with {@link Thread#onSpinWait}) on full or
 * empty until JMH stops the iteration. The figure to compare is the {@code poll} score: hand-offs
 * completed per second. The {@code offer} score of the unbounded queue counts elements that are
 * never polled within the iteration (its producer never waits). On this 2-core machine the two
 * threads take both cores.
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

    @Param({"jctools-mpsc", "array-blocking", "concurrent-linked", "concurrent-linked-bounded"})
    public String queue;

    private Queue<Object> q;

    @Setup(Level.Iteration)
    public void setUp() {
        q = switch (queue) {
            case "jctools-mpsc" -> new MpscArrayQueue<>(CAPACITY);
            case "array-blocking" -> new ArrayBlockingQueue<>(CAPACITY);
            case "concurrent-linked" -> new ConcurrentLinkedQueue<>();
            case "concurrent-linked-bounded" -> new CountedQueue(CAPACITY);
            default -> throw new IllegalArgumentException("unknown queue " + queue);
        };
    }

    /** {@link ConcurrentLinkedQueue} with an atomic element count that refuses offers at capacity. */
    static final class CountedQueue extends AbstractQueue<Object> {
        private final ConcurrentLinkedQueue<Object> q = new ConcurrentLinkedQueue<>();
        private final AtomicInteger count = new AtomicInteger();
        private final int capacity;

        CountedQueue(int capacity) {
            this.capacity = capacity;
        }

        @Override
        public boolean offer(Object e) {
            if (count.get() >= capacity) {
                return false;
            }
            count.incrementAndGet();
            return q.offer(e);
        }

        @Override
        public Object poll() {
            Object e = q.poll();
            if (e != null) {
                count.decrementAndGet();
            }
            return e;
        }

        @Override
        public Object peek() {
            return q.peek();
        }

        @Override
        public int size() {
            return count.get();
        }

        @Override
        public Iterator<Object> iterator() {
            return q.iterator();
        }
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
