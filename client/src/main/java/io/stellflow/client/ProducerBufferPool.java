package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a {@link ProducerBatch} gets its direct buffers and gives them back: either straight from a
 * Netty allocator ({@link #of}: {@link #give} releases), or a producer's recycling pool ({@link
 * #recycling}) that keeps the buffers given back and hands them out again.
 *
 * <p>Why recycle: a buffer freed when its batch is done and allocated again for the next one is new
 * direct memory each time, which the JDK zero-fills and the kernel page-faults in. With compression
 * (issue #21) a batch's buffer holds {@code batch.size} over the compression ratio (about 2.6 MB for
 * the lab's lz4 JSON batches, 4.5 MB for zstd) and took a 4 MiB chunk of Netty's pooled allocator of
 * its own, freed and allocated again per batch: a quarter of the producer's application thread in
 * the lab profile, more than the codec. Without compression the same happened after every {@code
 * flush()} (so every transaction commit): all batch buffers freed at once, the next batches' memory
 * fresh; recycling them took flush-every-100-ms throughput from about 0.65 to about 1.0 of the
 * no-flush rate (docs/performance.md, "Where the 100 ms case lost"). A recycled buffer is allocated
 * once and its pages stay mapped.
 *
 * <p>Recycling: {@link #take} returns the smallest idle buffer of at least the asked capacity (a
 * ceiling lookup in a map from capacity to the idle buffers of that capacity: O(log n) in the
 * distinct capacities, not a scan of the idle buffers), else a new one whose capacity is the asked
 * one rounded up ({@link #roundedCapacityBytes}): to a power of two from {@link #MIN_BYTES} (4 KiB)
 * up to {@link #ROUND_BYTES} (1 MiB), so the default 16 KiB {@code batch.size} takes 16 KiB (one
 * between two powers of two takes the next: at most twice its size) and batches of one size share
 * one capacity; above it to a multiple of 1 MiB, so small changes of a
 * compressed batch's multi-MB size reuse the buffer. When no idle buffer is large enough, the largest
 * idle one is freed then, so the idle buffers follow the sizes asked. {@link #give} keeps a buffer
 * idle when only the batch held it ({@code refCnt() == 1}: no request frame still holds a slice of
 * it), the pool is open, and the idle buffers stay within {@code maxIdleBytes}; else it releases it.
 * So a pool allocates only when no idle buffer fits, and the direct memory a producer holds is what
 * its batches hold ({@code buffer.memory}, each rounded up as above) plus at most {@code
 * maxIdleBytes} idle per pool; since idle buffers are what completed batches gave back, in steady
 * state the two together stay about the most the batches ever held at once.
 *
 * <p>Thread-safety: thread-safe ({@code take} and {@code give} lock the pool briefly, for a map
 * lookup; buffers are allocated and freed outside the lock; buffers are given back by the sender,
 * I/O and compressing threads).
 */
abstract class ProducerBufferPool {
    /** The smallest capacity of a recycled buffer (4 KiB). */
    static final int MIN_BYTES = 4 << 10;

    /**
     * Up to this (1 MiB) a recycled buffer's capacity is a power of two; above it a multiple of it, so
     * small changes of the asked size reuse it.
     */
    static final int ROUND_BYTES = 1 << 20;

    /** The largest capacity a recycled buffer is made with (a larger request gets this and grows). */
    private static final int MAX_BYTES = Integer.MAX_VALUE - 8;

    /** A buffer of at least {@code minCapacityBytes} capacity, empty (indexes 0), owned by the caller. */
    abstract ByteBuf take(int minCapacityBytes);

    /** Gives back a buffer of {@link #take}; the caller must not touch it after. */
    abstract void give(ByteBuf buffer);

    /** True when {@link #take} reuses buffers (ask for the whole capacity a batch may need at once). */
    abstract boolean recycles();

    /** Frees the idle buffers; buffers given back later are released. Idempotent. */
    abstract void close();

    /**
     * How many buffers {@link #take} has allocated so far (not reused), for diagnostics and tests; -1
     * for a pool that does not recycle ({@link #of}: every take allocates).
     */
    abstract long allocatedBuffers();

    /**
     * Buffers {@link #take}n and not given back yet, for diagnostics and tests: 0 once every batch of
     * a closed producer is done; a buffer given back twice makes it lower. -1 for a pool that does not
     * recycle ({@link #of}).
     */
    abstract long outstandingBuffers();

    /** Buffers straight from {@code alloc}: {@link #take} allocates, {@link #give} releases. */
    static ProducerBufferPool of(ByteBufAllocator alloc) {
        return new ProducerBufferPool() {
            @Override
            ByteBuf take(int minCapacityBytes) {
                return alloc.directBuffer(minCapacityBytes);
            }

            @Override
            long allocatedBuffers() {
                return -1;
            }

            @Override
            long outstandingBuffers() {
                return -1;
            }

            @Override
            void give(ByteBuf buffer) {
                buffer.release();
            }

            @Override
            boolean recycles() {
                return false;
            }

            @Override
            void close() {}
        };
    }

    /**
     * A recycling pool keeping at most {@code maxIdleBytes} of idle buffers, allocating new ones as
     * unpooled direct buffers.
     */
    static ProducerBufferPool recycling(long maxIdleBytes) {
        return new Recycling(maxIdleBytes);
    }

    /**
     * The capacity a recycling pool makes a buffer with for a request of {@code minCapacityBytes}:
     * at least {@link #MIN_BYTES}; a power of two up to {@link #ROUND_BYTES}; above it the next
     * multiple of {@link #ROUND_BYTES} (at most {@code Integer.MAX_VALUE - 8}).
     */
    static int roundedCapacityBytes(int minCapacityBytes) {
        if (minCapacityBytes <= MIN_BYTES) {
            return MIN_BYTES;
        }
        if (minCapacityBytes <= ROUND_BYTES) {
            return Integer.highestOneBit(minCapacityBytes - 1) << 1;
        }
        long rounded = ((long) minCapacityBytes + ROUND_BYTES - 1) / ROUND_BYTES * ROUND_BYTES;
        return (int) Math.min(rounded, MAX_BYTES);
    }

    private static final class Recycling extends ProducerBufferPool {
        /** Unpooled direct buffers without the leak detector's wrapper (a pool buffer lives long). */
        private static final ByteBufAllocator UNPOOLED = new UnpooledByteBufAllocator(true, true);

        private final long maxIdleBytes;

        /**
         * Guarded by {@code this}: the idle buffers by capacity (no empty queue); each queue is
         * last-in first-out, so the most recently used buffer (its pages likely in cache) goes first.
         */
        private final TreeMap<Integer, ArrayDeque<ByteBuf>> idle = new TreeMap<>();

        /** Guarded by {@code this}: the capacities of the idle buffers together. */
        private long idleBytes;

        /** Guarded by {@code this}. */
        private boolean closed;

        /** Guarded by {@code this}: see {@link #allocatedBuffers}. */
        private long allocated;

        /** Guarded by {@code this}: see {@link #outstandingBuffers}. */
        private long outstanding;

        Recycling(long maxIdleBytes) {
            this.maxIdleBytes = maxIdleBytes;
        }

        @Override
        ByteBuf take(int minCapacityBytes) {
            ByteBuf tooSmall = null;
            synchronized (this) {
                outstanding++;
                Map.Entry<Integer, ArrayDeque<ByteBuf>> fit = idle.ceilingEntry(minCapacityBytes);
                if (fit != null) {
                    return poll(fit);
                }
                Map.Entry<Integer, ArrayDeque<ByteBuf>> largest = idle.lastEntry();
                if (largest != null) {
                    tooSmall = poll(largest);
                }
                allocated++;
            }
            if (tooSmall != null) {
                tooSmall.release();
            }
            return UNPOOLED.directBuffer(roundedCapacityBytes(minCapacityBytes));
        }

        /** Takes a buffer of {@code e}'s capacity out of the idle ones. Called holding {@code this}. */
        private ByteBuf poll(Map.Entry<Integer, ArrayDeque<ByteBuf>> e) {
            ArrayDeque<ByteBuf> q = e.getValue();
            ByteBuf b = q.pollLast();
            if (q.isEmpty()) {
                idle.remove(e.getKey());
            }
            idleBytes -= b.capacity();
            return b;
        }

        @Override
        void give(ByteBuf buffer) {
            // refCnt 1: only the batch held it; a request frame still writing a slice of it (a batch
            // failed by its delivery timeout mid-write) holds another, and frees it when done.
            boolean onlyTheBatch = buffer.refCnt() == 1;
            int capacity = buffer.capacity();
            synchronized (this) {
                outstanding--;
                if (onlyTheBatch && !closed && idleBytes + capacity <= maxIdleBytes) {
                    buffer.clear();
                    idle.computeIfAbsent(capacity, c -> new ArrayDeque<>()).addLast(buffer);
                    idleBytes += capacity;
                    return;
                }
            }
            buffer.release();
        }

        @Override
        boolean recycles() {
            return true;
        }

        @Override
        synchronized long allocatedBuffers() {
            return allocated;
        }

        @Override
        synchronized long outstandingBuffers() {
            return outstanding;
        }

        @Override
        void close() {
            ArrayList<ByteBuf> free = new ArrayList<>();
            synchronized (this) {
                closed = true;
                idle.values().forEach(free::addAll);
                idle.clear();
                idleBytes = 0;
            }
            free.forEach(ByteBuf::release);
        }
    }
}
