package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;

/**
 * Where a {@link ProducerBatch} gets its direct buffers and gives them back: either straight from a
 * Netty allocator ({@link #of}: {@link #give} releases), or a producer's recycling pool ({@link
 * #recycling}) that keeps the buffers given back and hands them out again.
 *
 * <p>Why recycle (issue #21): with compression a batch's buffer holds {@code batch.size} over the
 * compression ratio (about 2.6 MB for the lab's lz4 JSON batches, 4.5 MB for zstd), and the
 * compressed copy a second buffer of about {@code batch.size}. From Netty's pooled allocator these
 * took a 4 MiB chunk of their own, which the arena freed when the batch was done and allocated
 * again (zeroed, then page-faulted in) for the next one, and the batch buffer grew by copying from
 * {@code batch.size} to the fill limit: a quarter of the producer's application thread in the lab
 * profile, more than the codec. A recycled buffer is allocated once and its pages stay mapped.
 *
 * <p>Recycling: {@link #take} returns the smallest idle buffer of at least the asked capacity, else
 * a new one (capacity rounded up to {@link #ROUND_BYTES}; an idle buffer too small for the request
 * is freed then, so the idle buffers follow the sizes asked). {@link #give} keeps a buffer idle when
 * only the batch held it ({@code refCnt() == 1}: no request frame still holds a slice of it), the
 * pool is open, and the idle buffers stay within {@code maxIdleBytes}; else it releases it. So the
 * direct memory a producer holds is what its batches hold ({@code buffer.memory}) plus at most
 * {@code maxIdleBytes} idle per pool.
 *
 * <p>Thread-safety: thread-safe ({@code take} and {@code give} lock the pool briefly; buffers are
 * given back by the sender, I/O and compressing threads).
 */
abstract class ProducerBufferPool {
    /** A recycled buffer's capacity is a multiple of this (1 MiB), so small changes of the asked size reuse it. */
    static final int ROUND_BYTES = 1 << 20;

    /** A buffer of at least {@code minCapacityBytes} capacity, empty (indexes 0), owned by the caller. */
    abstract ByteBuf take(int minCapacityBytes);

    /** Gives back a buffer of {@link #take}; the caller must not touch it after. */
    abstract void give(ByteBuf buffer);

    /** True when {@link #take} reuses buffers (ask for the whole capacity a batch may need at once). */
    abstract boolean recycles();

    /** Frees the idle buffers; buffers given back later are released. Idempotent. */
    abstract void close();

    /** Buffers straight from {@code alloc}: {@link #take} allocates, {@link #give} releases. */
    static ProducerBufferPool of(ByteBufAllocator alloc) {
        return new ProducerBufferPool() {
            @Override
            ByteBuf take(int minCapacityBytes) {
                return alloc.directBuffer(minCapacityBytes);
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

    /** A recycling pool keeping at most {@code maxIdleBytes} of idle buffers. */
    static ProducerBufferPool recycling(long maxIdleBytes) {
        return new Recycling(maxIdleBytes);
    }

    private static final class Recycling extends ProducerBufferPool {
        /** Unpooled direct buffers without the leak detector's wrapper (a pool buffer lives long). */
        private static final ByteBufAllocator UNPOOLED = new UnpooledByteBufAllocator(true, true);

        private final long maxIdleBytes;
        /** Guarded by {@code this}; a handful of buffers, so a linear best-fit scan. */
        private final ArrayList<ByteBuf> idle = new ArrayList<>();

        private long idleBytes;
        private boolean closed;

        Recycling(long maxIdleBytes) {
            this.maxIdleBytes = maxIdleBytes;
        }

        @Override
        ByteBuf take(int minCapacityBytes) {
            ByteBuf tooSmall = null;
            synchronized (this) {
                int best = -1;
                int largest = -1;
                for (int i = 0; i < idle.size(); i++) {
                    int capacity = idle.get(i).capacity();
                    if (capacity >= minCapacityBytes
                            && (best < 0 || capacity < idle.get(best).capacity())) {
                        best = i;
                    }
                    if (largest < 0 || capacity > idle.get(largest).capacity()) {
                        largest = i;
                    }
                }
                if (best >= 0) {
                    return remove(best);
                }
                if (largest >= 0) {
                    tooSmall = remove(largest);
                }
            }
            if (tooSmall != null) {
                tooSmall.release();
            }
            long rounded = ((long) minCapacityBytes + ROUND_BYTES - 1) / ROUND_BYTES * ROUND_BYTES;
            return UNPOOLED.directBuffer((int) Math.min(rounded, Integer.MAX_VALUE - 8));
        }

        private ByteBuf remove(int i) {
            int last = idle.size() - 1;
            ByteBuf b = idle.get(i);
            idle.set(i, idle.get(last));
            idle.remove(last);
            idleBytes -= b.capacity();
            return b;
        }

        @Override
        void give(ByteBuf buffer) {
            // refCnt 1: only the batch held it; a request frame still writing a slice of it (a batch
            // failed by its delivery timeout mid-write) holds another, and frees it when done.
            if (buffer.refCnt() == 1) {
                synchronized (this) {
                    if (!closed && idleBytes + buffer.capacity() <= maxIdleBytes) {
                        buffer.clear();
                        idle.add(buffer);
                        idleBytes += buffer.capacity();
                        return;
                    }
                }
            }
            buffer.release();
        }

        @Override
        boolean recycles() {
            return true;
        }

        @Override
        void close() {
            ArrayList<ByteBuf> free;
            synchronized (this) {
                closed = true;
                free = new ArrayList<>(idle);
                idle.clear();
                idleBytes = 0;
            }
            free.forEach(ByteBuf::release);
        }
    }
}
