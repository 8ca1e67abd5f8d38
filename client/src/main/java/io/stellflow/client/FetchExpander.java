package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decompresses a consumer's Fetch answers ahead of its application thread, on a thread of its own
 * ({@code stellflow-expand-<client.id>}, started at the first compressed answer): an answer whose
 * first batch is zstd, gzip or snappy is handed over by the I/O thread as it arrives ({@link #offer})
 * and expanded into one of a few reusable buffers ({@link RecordBatchDecompressor#expandAll}: CRCs
 * checked on the bytes as sent, every compressed batch decompressed, every batch's records checked
 * while still in this thread's cache) while the application decodes the answer before it;
 * {@link CompletedFetchHandler#decodeAll} then takes the expanded set ({@link #await}) and decodes it
 * as uncompressed batches.
 *
 * <p>Why: decompression is most of a consumer's work on compressed topics (zstd level 3 JSON: 60% of
 * the application thread's samples, the rest the record walk and copies), and Kafka's consumer does
 * both on the polling thread in turn. Here they overlap: the next Fetch is sent from the batch
 * headers before decoding (as for uncompressed data) and its answer is expanded while the
 * application decodes this one, so a poll loop's rate is set by the slower of the two, not their
 * sum.
 *
 * <p>Memory: at most {@link #MAX_BUFFERS} answers are expanded ahead (queued, running, or expanded
 * and not yet released), each into a heap buffer of at most {@link #MAX_SET_BYTES}, kept for reuse;
 * an answer over either bound, or one that fails a check (bad CRC, malformed stream, over the
 * batch cap, a record that breaks a rule), is left to the application thread, which decompresses
 * it itself batch by batch and reports its errors exactly as without this class. So bad input never fails here.
 *
 * <p>Thread-safety: {@link #offer} runs on the I/O thread, {@link #await} and {@link #release} on
 * the application thread (release also on the I/O thread after close); all state is guarded by one
 * lock. The expanding thread alone uses the decompressor.
 */
final class FetchExpander implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FetchExpander.class);

    /** Answers expanded ahead at once: one being decoded, one expanding, one arrived meanwhile. */
    static final int MAX_BUFFERS = 3;
    /**
     * The codecs whose answers are expanded ahead: all but lz4, which decompresses at memory speed;
     * handing its answers over lost more (the expanded set has left the caches when poll reads it)
     * than the overlap gained. JSON log records against the consumer without this class, one broker
     * (docs/compression.md, "Consumer"): zstd 1.02-1.18x the MB/s, gzip 1.13-1.15x, snappy
     * 1.03-1.09x, lz4 0.83-0.92x.
     */
    static final Set<CompressionType> AHEAD =
            EnumSet.of(CompressionType.ZSTD, CompressionType.GZIP, CompressionType.SNAPPY);

    /** The largest expanded answer kept (bytes); a larger one is left to the application thread. */
    static final long MAX_SET_BYTES = 64L << 20;

    /** A new or too small buffer is made this many times the compressed answer's size. */
    private static final long EXPANSION_GUESS = 5;

    private static final int NONE = 0;
    private static final int QUEUED = 1;
    private static final int RUNNING = 2;
    private static final int DONE = 3;
    private static final int CANCELLED = 4;

    private final String threadName;
    private final boolean checkCrcs;
    private final RecordBatchDecompressor decompressor;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<Job> queue = new ArrayDeque<>();
    private final ArrayDeque<ByteBuf> free = new ArrayDeque<>();
    /** Answers admitted and not yet given back (queued, running, or expanded and not released). */
    private int busy;

    private Thread thread;
    private boolean closed;
    /** The expanding thread could not be started: every answer is left to poll. */
    private boolean noThread;
    /** Expanding thread only: a failed expansion was logged (once: the answers go on through poll). */
    private boolean warned;

    /**
     * @param clientId names the thread
     * @param checkCrcs {@code check.crcs}: check each batch's CRC-32C before expanding
     * @param decompressor used by the expanding thread only, closed by it
     */
    FetchExpander(String clientId, boolean checkCrcs, RecordBatchDecompressor decompressor) {
        this.threadName = "stellflow-expand-" + clientId;
        this.checkCrcs = checkCrcs;
        this.decompressor = decompressor;
    }

    /**
     * I/O thread: takes {@code f} for expansion if its first batch is compressed with a codec in
     * {@link #AHEAD} and fewer than {@link #MAX_BUFFERS} answers are ahead (an answer whose first
     * batch is plain, rare, goes to poll's lazy path like any other); retains the records until
     * expanded. Never blocks.
     *
     * @return whether {@code f} was taken
     */
    boolean offer(CompletedFetch f) {
        FetchResult r = f.result;
        if (r == null || r.records() == null || !AHEAD.contains(RecordBatchDecompressor.firstBatchCodec(r.records()))) {
            return false;
        }
        lock.lock();
        try {
            if (closed || noThread || busy >= MAX_BUFFERS || !started()) {
                return false;
            }
            busy++;
            f.expander = this;
            f.expandState = QUEUED;
            queue.add(new Job(f, r.records().retain()));
            changed.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: the expanding thread runs, started now if need be; false if it cannot start. */
    private boolean started() {
        if (thread != null) {
            return true;
        }
        Thread t = new Thread(this::run, threadName);
        t.setDaemon(true);
        try {
            t.start();
        } catch (RuntimeException | OutOfMemoryError e) { // no thread to be had: poll expands as before
            noThread = true;
            LOG.warn("{}: could not start, poll expands the answers: {}", threadName, e.toString());
            return false;
        }
        thread = t;
        return true;
    }

    /**
     * Application thread: waits until {@code f} (taken by {@link #offer}) is expanded and returns the
     * expanded set, owned by {@code f} until its {@link CompletedFetch#release}; null when it could not
     * be (the caller decodes {@code f}'s records itself).
     *
     * <p>Interrupted (or called with the interrupt flag set), it cancels an answer still queued and
     * returns null at once; an answer already expanding is waited for (one answer: milliseconds),
     * since its batches are counted in the consumer's metrics as it completes and decoding it again
     * would count them twice. The interrupt flag is set again before returning.
     */
    ByteBuf await(CompletedFetch f) {
        boolean interrupted = false;
        lock.lock();
        try {
            while (f.expandState == QUEUED || f.expandState == RUNNING) {
                if (!thread.isAlive()) {
                    return null; // died of an Error it could not survive: poll expands the answer
                }
                if (interrupted && f.expandState == QUEUED) {
                    f.expandState = CANCELLED; // the expanding thread gives it back unexpanded
                    return null;
                }
                try {
                    changed.await(100, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    interrupted = true; // flag cleared: the wait for a running expansion goes on
                }
            }
            return f.expandState == DONE ? f.expanded : null;
        } finally {
            lock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link CompletedFetch#release}: gives back {@code f}'s buffer, or cancels its expansion. */
    void release(CompletedFetch f) {
        lock.lock();
        try {
            switch (f.expandState) {
                case QUEUED, RUNNING -> f.expandState = CANCELLED; // the expanding thread gives it back
                case DONE -> {
                    recycle(f.expanded);
                    f.expanded = null;
                    f.expandState = NONE;
                    busy--;
                }
                default -> {}
            }
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        try {
            expandUntilClosed();
        } finally {
            shutDown(); // also when an Error the loop does not catch ends the thread
        }
    }

    private void expandUntilClosed() {
        while (true) {
            Job job;
            ByteBuf out;
            lock.lock();
            try {
                while (queue.isEmpty() && !closed) {
                    changed.awaitUninterruptibly();
                }
                if (closed) {
                    break;
                }
                job = queue.poll();
                if (job.f.expandState == CANCELLED) {
                    job.records.release();
                    job.f.expandState = NONE;
                    busy--;
                    continue;
                }
                job.f.expandState = RUNNING;
                out = free.poll();
            } finally {
                lock.unlock();
            }
            CompletedFetch f = job.f;
            ByteBuf records = job.records;
            int n = -1;
            try {
                // Room for records compressed 5:1 at first (zstd JSON logs: 4.7:1), not grown by
                // doubling from a small buffer: each doubling allocates, zeroes and copies.
                int want = (int) Math.min(MAX_SET_BYTES, EXPANSION_GUESS * records.readableBytes());
                if (out == null || out.capacity() < want) {
                    if (out != null) {
                        out.release();
                        out = null;
                    }
                    out = Unpooled.buffer(want);
                }
                n = decompressor.expandAll(records, checkCrcs, MAX_SET_BYTES, out.clear());
            } catch (RuntimeException | OutOfMemoryError e) {
                // Not expanded: the application thread decodes the answer itself and meets the
                // problem there (an exception, or an OutOfMemoryError for a buffer, on its thread).
                if (!warned) {
                    warned = true;
                    LOG.warn(
                            "{}: expanding a fetched answer ahead failed, poll expands it: {}",
                            threadName,
                            e.toString());
                }
            } finally {
                records.release();
            }
            lock.lock();
            try {
                if (f.expandState == CANCELLED || n < 0) {
                    if (out != null) {
                        recycle(out);
                    }
                    busy--;
                    f.expandState = NONE;
                } else {
                    f.expanded = out;
                    f.expandState = DONE;
                }
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Expanding thread, as it ends: refuses further answers, gives back what is queued and the
     * buffers kept, and frees the decompressor.
     */
    private void shutDown() {
        lock.lock();
        try {
            closed = true;
            for (ByteBuf b = free.poll(); b != null; b = free.poll()) {
                b.release();
            }
            for (Job job = queue.poll(); job != null; job = queue.poll()) {
                job.records.release();
                job.f.expandState = NONE;
                busy--;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        decompressor.close();
    }

    /** Under the lock: keeps {@code buf} for reuse unless closed or grown past the bound. */
    private void recycle(ByteBuf buf) {
        if (closed || buf.capacity() > MAX_SET_BYTES) {
            buf.release();
        } else {
            free.push(buf);
        }
    }

    /**
     * Stops the expanding thread once its current answer is done (it frees the decompressor) and
     * waits up to a second for it; answers still queued are given back, buffers dropped. Idempotent;
     * answers offered later are refused.
     */
    @Override
    public void close() {
        Thread t;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (ByteBuf b = free.poll(); b != null; b = free.poll()) {
                b.release();
            }
            changed.signalAll();
            t = thread;
        } finally {
            lock.unlock();
        }
        if (t == null) {
            decompressor.close();
        } else {
            try {
                t.join(1_000); // one answer's expansion: milliseconds
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** An answer taken, with the reference on its records this class holds until expanded. */
    private record Job(CompletedFetch f, ByteBuf records) {}
}
