package io.stellflow.client;

import io.netty.buffer.ByteBufAllocator;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import java.util.ArrayDeque;
import java.util.function.Supplier;

/**
 * The producer's {@code compression.type}: its codecs, how full a batch may get in uncompressed bytes
 * so that it compresses to about {@code batch.size} (Kafka counts compressed bytes too), and how a
 * partition's compression ratio estimate follows the batches ({@code docs/compression.md},
 * "Producer").
 *
 * <p>Codecs keep native state and are not thread-safe, while batches are compressed by whichever
 * thread takes them ({@link ProducerCompressionQueue}: the producer's compressor thread or an
 * application thread that sealed a batch). So {@link #compress} borrows a codec from a small pool
 * (one per thread compressing at the same moment, made on first need, reused after) and returns it.
 *
 * <p>Thread-safety: thread-safe; the pool is guarded by {@code this}; {@link #fillLimitBytes} and
 * {@link #nextCompressionRatio} are pure.
 */
final class ProducerCompression implements AutoCloseable {
    /**
     * Smallest compression ratio (compressed / uncompressed) a partition's estimate may reach: a
     * batch holds at most 32 times {@code batch.size} of uncompressed records. JSON log lines
     * compress 3-5x (docs/compression.md); 32x leaves room for more repetitive data while bounding
     * the buffer a batch reserves.
     */
    static final double MIN_COMPRESSION_RATIO = 1.0 / 32;

    /**
     * Largest uncompressed batch the estimate may ask for (8 MiB), whatever {@code batch.size} and the
     * ratio say: a consumer expands a whole batch at once, and 8 MiB is 8 times Kafka's default
     * {@code max.partition.fetch.bytes} (the broker's default cap on a batch's decompressed records
     * is 64 MiB). A single larger record still gets a batch of its own.
     */
    static final int MAX_UNCOMPRESSED_BATCH_BYTES = 8 << 20;

    /**
     * The fill aims at {@code batch.size} / 1.1 of compressed bytes: batches of one partition
     * compress within a few percent of each other, and one that comes out above {@code batch.size}
     * is split in two ({@link ProducerBatch#compress}), which costs a record object per record and
     * two half-size batches. With no margin about half the batches would overshoot, since the
     * estimate settles on the mean ratio.
     */
    static final double FILL_MARGIN = 1.1;

    private final CompressionType type;
    private final Supplier<CompressionCodec> codecs;
    /** Codecs not in use; guarded by {@code this}. */
    private final ArrayDeque<CompressionCodec> idle = new ArrayDeque<>();
    /** After {@link #close}: a codec given back is closed instead of kept. Guarded by {@code this}. */
    private boolean closed;

    private final int batchSizeBytes;
    /**
     * A compressed batch above this is split ({@link #compress}): {@code batch.size}, or unbounded
     * with {@code enable.idempotence}, whose Produce carries one batch per partition with one
     * sequence range (spec §6.12), so a batch is sent whole even when it compressed worse than
     * estimated.
     */
    private final int splitAboveBytes;

    /** The uncompressed batches' buffers (recycled: see {@link ProducerBufferPool}). */
    private final ProducerBufferPool plainBuffers;
    /** The compressed batches' buffers (recycled). */
    private final ProducerBufferPool compressedBuffers;

    private ProducerCompression(
            CompressionType type,
            Supplier<CompressionCodec> codecs,
            int batchSizeBytes,
            int splitAboveBytes,
            long bufferMemoryBytes) {
        this.type = type;
        this.codecs = codecs;
        this.batchSizeBytes = batchSizeBytes;
        this.splitAboveBytes = splitAboveBytes;
        // Idle buffers of both pools together within buffer.memory.
        this.plainBuffers = ProducerBufferPool.recycling(bufferMemoryBytes / 2);
        this.compressedBuffers = ProducerBufferPool.recycling(bufferMemoryBytes / 2);
    }

    /** The compression of {@code config}, or null for {@code compression.type=none}. */
    static ProducerCompression of(ProducerConfig config) {
        if (config.compressionType() == CompressionType.NONE) {
            return null;
        }
        return of(config, () -> CompressionCodecs.codec(config.compressionType(), config.compressionLevels()));
    }

    /**
     * The compression of {@code config} (not {@code none}) with codecs from {@code codecs} (tests give
     * a codec that fails).
     */
    static ProducerCompression of(ProducerConfig config, Supplier<CompressionCodec> codecs) {
        return new ProducerCompression(
                config.compressionType(),
                codecs,
                config.batchSizeBytes(),
                config.enableIdempotence() ? Integer.MAX_VALUE : config.batchSizeBytes(),
                config.bufferMemoryBytes());
    }

    /** Where the producer's batches get their (uncompressed) buffers. */
    ProducerBufferPool plainBuffers() {
        return plainBuffers;
    }

    /** Where the compressed batches get their buffers (tests count what is given back). */
    ProducerBufferPool compressedBuffers() {
        return compressedBuffers;
    }

    CompressionType type() {
        return type;
    }

    /**
     * The uncompressed size at which a new batch is full for a partition whose estimated ratio is
     * {@code ratio}: {@code batch.size} / (ratio x {@link #FILL_MARGIN}), within [{@code batch.size},
     * {@link #MAX_UNCOMPRESSED_BATCH_BYTES}], so the batch compresses to a little under {@code
     * batch.size}.
     */
    int fillLimitBytes(double ratio) {
        double limit = batchSizeBytes / (Math.max(ratio, MIN_COMPRESSION_RATIO) * FILL_MARGIN);
        return (int) Math.max(batchSizeBytes, Math.min(limit, MAX_UNCOMPRESSED_BATCH_BYTES));
    }

    /**
     * The next estimate after a batch compressed to {@code observed}: up at once when the batch came
     * out larger than estimated (an overfull batch costs more than a small one), with 5% margin; down
     * by half the gap when it came out smaller, so one very compressible batch does not make the next
     * ones huge, while the first estimate (1.0) comes within 7% of a steady 0.2 after 6 full batches.
     *
     * <p>The step is scaled by {@code weight}, the batch's uncompressed size over its fill limit
     * (capped at 1): a full batch moves the estimate as above, a small one (the tail a {@code flush}
     * or {@code linger.ms} sealed) in proportion. A batch of a few records compresses worse than a
     * full one (the codec's framing and a cold dictionary weigh more), and letting its ratio raise
     * the estimate at once made the next full batches half their size.
     *
     * @param estimate the partition's estimate, in (0, 1]
     * @param observed compressed / uncompressed size of the batch just compressed
     * @param weight the batch's uncompressed bytes / its fill limit; values above 1 count as 1
     * @return the next estimate, within [{@link #MIN_COMPRESSION_RATIO}, 1]
     */
    static double nextCompressionRatio(double estimate, double observed, double weight) {
        double target = observed > estimate ? observed * 1.05 : estimate + (observed - estimate) / 2;
        double next = estimate + (target - estimate) * Math.max(0.0, Math.min(weight, 1.0));
        return Math.max(MIN_COMPRESSION_RATIO, Math.min(next, 1.0));
    }

    /**
     * Compresses the sealed {@code batch} (see {@link ProducerBatch#compress}) into batches of at
     * most {@code batch.size} bytes each (unless one record alone is larger), as the uncompressed
     * path guarantees: a broker whose {@code message.max.bytes} accepts {@code batch.size} accepts
     * them (with {@code enable.idempotence} it is never split, see {@link #splitAboveBytes}); returns
     * the batch's ratio. Runs on the calling thread with a codec of the pool.
     *
     * @throws IllegalStateException when this compression is closed
     * @throws RuntimeException what the codec throws (a bug: the codecs refuse nothing they are given)
     */
    double compress(ProducerBatch batch, ByteBufAllocator alloc) {
        return compress(batch, ProducerBufferPool.of(alloc));
    }

    /** {@link #compress(ProducerBatch, ByteBufAllocator)} into a recycled buffer of this producer. */
    double compress(ProducerBatch batch) {
        return compress(batch, compressedBuffers);
    }

    /**
     * Makes one codec now and keeps it in the pool, so the first batch does not wait for the codec's
     * library to load and bind (zstd-jni's FFM binding: about 0.1 s at a JVM's first use). Called by
     * the compressor thread as it starts. A codec that cannot be made is left to the first batch,
     * whose compression then fails with the cause.
     */
    void prepare() {
        try {
            giveBack(borrow());
        } catch (RuntimeException e) {
            // the first compress meets it again and fails that batch with it
        }
    }

    private double compress(ProducerBatch batch, ProducerBufferPool outBuffers) {
        CompressionCodec codec = borrow();
        try {
            return batch.compress(codec, outBuffers, splitAboveBytes);
        } finally {
            giveBack(codec);
        }
    }

    private CompressionCodec borrow() {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException(type.configName() + " compression of a closed producer");
            }
            CompressionCodec codec = idle.pollLast();
            if (codec != null) {
                return codec;
            }
        }
        return codecs.get();
    }

    private void giveBack(CompressionCodec codec) {
        synchronized (this) {
            if (!closed) {
                idle.addLast(codec);
                return;
            }
        }
        codec.close();
    }

    /**
     * Frees the idle codecs' state and the idle buffers; a codec in use is freed when its batch is
     * done, a buffer when its batch is. Idempotent; a later {@link #compress} fails.
     */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            while (!idle.isEmpty()) {
                idle.pollLast().close();
            }
        }
        plainBuffers.close();
        compressedBuffers.close();
    }
}
