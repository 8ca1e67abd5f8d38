package io.stellflow.client;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The sealed batches of a producer with {@code compression.type} set that wait to be compressed, and
 * the compressing itself, done by whichever thread takes a batch first: the producer's compressor
 * thread ({@link #run}), or an application thread whose {@code send} needs a new batch while a batch
 * waits and the compressor thread is busy ({@link #helpIfWanted}), or a thread in {@code flush}
 * ({@link #help}). The sender thread never compresses: it sends a partition's
 * batches once they are {@link ProducerBatch.Stage#READY}, in sequence order, so a batch that
 * finishes compressing before an older one of its partition waits for it (order and the idempotent
 * producer's sequences are untouched: a batch is stamped only when the sender takes it, after
 * compression, and it is never split then; the halves of a batch the broker refused as too large,
 * stamped with its sequences, are compressed here too, each a new batch whose stamp the compression
 * copies).
 *
 * <p>Why: compressing on the sender made it the producer's bottleneck. zstd level 3 compresses JSON
 * records at about 300 MB/s on one core of the lab machine, so a 4.5 MB batch (1 MiB compressed)
 * held the sender for about 15 ms, during which it sent nothing for any partition, and the
 * application threads filled {@code buffer.memory} behind it: 7 such batches, 180 ms at the lab's
 * 171 MB/s, which is the 158 ms p50 the lab measured (perf/results/20261204T202639Z). Here compressing
 * batch N overlaps sending batch N-1 and appending batch N+1, and an application thread that seals a
 * batch while the compressor thread is busy compresses it itself: the work waiting for a codec stays
 * at about one batch per thread instead of growing until {@code buffer.memory} is full.
 *
 * <p>A forced close ({@link #closeForcefully}) ends the compressing: from that moment no thread takes
 * a batch, the waiting ones stay in their partitions' queues for the sender to fail with "producer is
 * closed forcefully", and only the batches already in a codec finish there (their threads fail them).
 * Why: the sender frees the codecs right after, and a batch taken then would fail with the closed
 * codecs' error instead of the close's.
 *
 * <p>Thread-safety: the waiting batches are guarded by the producer's accumulator lock (passed in;
 * methods marked "under the lock" need it held); compressing runs outside it, on the thread that
 * moved the batch to {@link ProducerBatch.Stage#COMPRESSING}.
 */
final class ProducerCompressionQueue implements Runnable {
    /** What the producer does once a batch is compressed, or could not be. */
    interface Listener {
        /**
         * Under the lock: {@code batch} is compressed to {@code ratio} of its size and now READY.
         *
         * @return null when the sender may take it; else the error to fail it with instead (the
         *     producer was closed forcefully while it was compressed): the listener took it out of its
         *     partition's queue under this lock, and the caller passes it to {@link #failed}
         */
        StellflowException compressed(ProducerBatch batch, double ratio);

        /**
         * Outside the lock, on the thread that compressed {@code batch}: the producer fails its records
         * with {@code error}. The codec threw (the batch still uncompressed, still in its partition's
         * queue), or {@link #compressed} refused it.
         */
        void failed(ProducerBatch batch, StellflowException error);
    }

    private final ReentrantLock lock;
    private final Condition work;
    private final ArrayDeque<ProducerBatch> waiting = new ArrayDeque<>();

    private final ProducerCompression compression;
    private final ClientMetrics metrics;
    private final Listener listener;
    private boolean stopping;
    /** {@link #closeForcefully} was called: no batch is queued or taken any more. */
    private boolean forced;
    /** The compressor thread runs ({@link #run}); before and after it every waiting batch wants help. */
    private boolean compressorStarted;
    /** The compressor thread is compressing a batch now. */
    private boolean compressorBusy;

    ProducerCompressionQueue(
            ReentrantLock lock, ProducerCompression compression, ClientMetrics metrics, Listener listener) {
        this.lock = lock;
        this.work = lock.newCondition();
        this.compression = compression;
        this.metrics = metrics;
        this.listener = listener;
    }

    ProducerCompression compression() {
        return compression;
    }

    /**
     * Under the lock: queues the sealed {@code batch} for compression and wakes the compressor thread.
     * After {@link #closeForcefully} the batch is AWAITING_COMPRESSION but queued nowhere: no thread
     * compresses it, the sender fails it.
     */
    void add(ProducerBatch batch) {
        batch.stage = ProducerBatch.Stage.AWAITING_COMPRESSION;
        if (forced) {
            return;
        }
        waiting.addLast(batch);
        work.signal();
    }

    /**
     * Under the lock: a forced close. No thread takes a batch from now on; the waiting ones leave this
     * queue (still AWAITING_COMPRESSION in their partitions' queues, where the sender fails them), and
     * the compressor thread ends. A batch in a codec now stays its thread's. Idempotent.
     */
    void closeForcefully() {
        forced = true;
        waiting.clear();
        work.signalAll();
    }

    /**
     * Under the lock: takes back a batch nobody has started compressing (it is failed before being
     * compressed); false when it is not waiting (being compressed, or done).
     */
    boolean remove(ProducerBatch batch) {
        if (batch.stage != ProducerBatch.Stage.AWAITING_COMPRESSION || !waiting.remove(batch)) {
            return false;
        }
        return true;
    }

    /** Whether a batch waits for a codec (takes the lock; for tests and diagnostics). */
    boolean hasWaiting() {
        lock.lock();
        try {
            return !waiting.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: whether a batch waits for a codec that the compressor thread cannot take now
     * (busy compressing another, or not started): an application thread should compress it ({@link
     * #helpIfWanted}). While the compressor thread is free it takes the waiting batches itself and
     * the application threads go on appending.
     */
    boolean helpWanted() {
        return !waiting.isEmpty() && (compressorBusy || !compressorStarted);
    }

    /**
     * Outside the lock: compresses waiting batches on the calling thread while {@link #helpWanted}.
     *
     * @return the batches this call compressed
     */
    int helpIfWanted() {
        return compressHere(true);
    }

    /** Under the lock: the compressor thread ends once no batch waits (at once after {@link #closeForcefully}). Idempotent. */
    void stop() {
        stopping = true;
        work.signalAll();
    }

    /**
     * Outside the lock: compresses waiting batches on the calling thread until none waits ({@code
     * flush}, which wants its batches sent now).
     *
     * @return the batches this call compressed
     */
    int help() {
        return compressHere(false);
    }

    /** Outside the lock: {@link #help}, or {@link #helpIfWanted} when {@code onlyIfWanted}. */
    private int compressHere(boolean onlyIfWanted) {
        int n = 0;
        while (true) {
            ProducerBatch batch;
            lock.lock();
            try {
                boolean take = onlyIfWanted ? helpWanted() : !waiting.isEmpty();
                batch = take ? take() : null;
            } finally {
                lock.unlock();
            }
            if (batch == null) {
                return n;
            }
            compress(batch, false);
            n++;
        }
    }

    /** The compressor thread: compresses batches as they are sealed until {@link #stop} and none waits. */
    @Override
    public void run() {
        compression.prepare(); // off the sending threads, while the first batch fills
        while (true) {
            ProducerBatch batch;
            lock.lock();
            try {
                compressorStarted = true;
                compressorBusy = false;
                while (waiting.isEmpty() && !stopping && !forced) {
                    work.await();
                }
                if (waiting.isEmpty()) {
                    compressorStarted = false; // gone: batches sealed from now on want help
                    return;
                }
                batch = take();
                compressorBusy = true;
            } catch (InterruptedException e) {
                compressorStarted = false;
                Thread.currentThread().interrupt();
                return;
            } finally {
                lock.unlock();
            }
            compress(batch, true);
        }
    }

    /** Under the lock: the oldest waiting batch, now COMPRESSING and owned by the calling thread. */
    private ProducerBatch take() {
        ProducerBatch batch = waiting.pollFirst();
        batch.stage = ProducerBatch.Stage.COMPRESSING;
        return batch;
    }

    /**
     * Outside the lock: compresses {@code batch}, counts it and publishes it READY, or hands it to
     * {@link Listener#failed} (its codec threw, or the producer was closed forcefully meanwhile).
     */
    private void compress(ProducerBatch batch, boolean byCompressorThread) {
        int plainBytes = batch.sizeInBytes();
        long startNs = System.nanoTime();
        double ratio;
        try {
            ratio = compression.compress(batch);
        } catch (RuntimeException e) {
            listener.failed(
                    batch,
                    new StellflowException(
                            Errors.UNKNOWN_SERVER_ERROR,
                            "compressing a batch of " + batch.tp + " with "
                                    + compression.type().configName() + " failed: " + e,
                            e));
            return;
        }
        long elapsedNs = System.nanoTime() - startNs;
        // Records sections (headers excluded), as the broker and the consumer count them; a batch
        // split in parts (rare) counts each part's header.
        metrics.compression(
                compression.type(),
                batch.sizeInBytes() - (long) batch.batchCount() * RecordBatchLayout.HEADER_SIZE,
                plainBytes - RecordBatchLayout.HEADER_SIZE,
                elapsedNs);
        StellflowException refused;
        lock.lock();
        try {
            batch.stage = ProducerBatch.Stage.READY;
            if (byCompressorThread) {
                compressorBusy = false; // free again as the batch is published, not a moment later
            }
            refused = listener.compressed(batch, ratio);
        } finally {
            lock.unlock();
        }
        if (refused != null) {
            listener.failed(batch, refused);
        }
    }
}
