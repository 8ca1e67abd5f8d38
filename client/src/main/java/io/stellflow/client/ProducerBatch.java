package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RecordBatch being filled for one partition, with the callbacks of its records (the future of
 * {@code send(record)} is its own callback). The batch bytes live in a direct buffer that is
 * released exactly once, when the batch completes or fails (given back to its {@link
 * ProducerBufferPool}). In a producer the buffers come from its recycling pools (so a batch's buffer
 * is the whole reservation from the start, and never grows). With {@code compression.type} set, the
 * sealed batch is {@link #compress}ed once into a second buffer, which
 * replaces the first (given back at once), by the thread that took it from the {@link ProducerCompressionQueue} (never the
 * sender); a retried batch is sent compressed as it is.
 *
 * <p>{@code fillLimitBytes} is the uncompressed size at which the batch is full: {@code batch.size}
 * without compression, {@code batch.size} divided by the partition's estimated compression ratio
 * with it ({@link ProducerAccumulator}), so the batch compresses to about {@code batch.size} on the wire.
 *
 * <p>Thread-safety: guarded by the producer's accumulator lock; callbacks are called outside it. The
 * one exception is {@link #compress}, run outside the lock by the thread that moved the batch to
 * {@link Stage#COMPRESSING}: no other thread touches the batch's bytes until it is {@link
 * Stage#READY}, which is set under the lock (and so published with the compressed bytes).
 */
final class ProducerBatch {
    /** Where a batch is between its first record and its first send; guarded by the accumulator lock. */
    enum Stage {
        /** Records may be appended. */
        OPEN,
        /** Sealed; waits in the {@link ProducerCompressionQueue} for a thread to compress it. */
        AWAITING_COMPRESSION,
        /** Sealed; one thread is compressing it outside the lock. */
        COMPRESSING,
        /** Sealed (and compressed when compression is on): the sender may send it. */
        READY
    }

    private static final Logger LOG = LoggerFactory.getLogger(ProducerBatch.class);
    /** Record framing without key/value bytes: length 4, attributes 1, timestampDelta 8, offsetDelta 4, key len 4, value len 4, header count 4. */
    static final int RECORD_OVERHEAD = 29;

    final TopicPartition tp;
    final long createdNs;
    /** Position of this batch in its partition's send order (0, 1, 2, ... per partition). */
    final long sequence;

    /**
     * Index, among the records of the batch that got {@link #sequence}, of this batch's first record:
     * 0, or for a part of a batch the broker refused as too large ({@link #halves}) where the part
     * starts. A partition sends by ({@code sequence}, {@code splitIndex}), so the parts of a batch
     * take its place, in record order ({@link ProducerPartitionQueue#requeue}).
     */
    final int splitIndex;

    final int reservedBytes;
    /** The uncompressed batch, then, once {@link #compress}ed, the compressed one. */
    private ByteBuf buffer;

    /** Where {@link #buffer} came from and goes back to. */
    private ProducerBufferPool buffers;

    /** Uncompressed size of the sealed batch, set by {@link #compress}; 0 until then. */
    private int uncompressedBytes;

    private boolean compressed;

    /** CRC-32C of the uncompressed batch's records section, when {@link #recordsCrcKnown}. */
    private int recordsCrc;

    /** Set by {@link #closeSummingRecords}; {@link #compress} replaces the records, and then it is unused. */
    private boolean recordsCrcKnown;

    private final RecordBatchBuilder builder;
    /** Per record (the first {@link #recordCount} entries): its callback and timestamp; grown by doubling. */
    private Callback[] callbacks = new Callback[64];

    private long[] timestamps = new long[64];
    private int recordCount;

    private final int fillLimitBytes;
    /** Estimated compressed/uncompressed size ratio at creation (1 without compression). */
    private final double estimatedRatio;

    private boolean closed;
    private boolean released;
    /** Guarded by the accumulator lock; see {@link Stage}. */
    Stage stage = Stage.OPEN;

    int attempts;
    long retryAfterNs;
    /**
     * The retriable error of the latest failed attempt of this batch (for the delivery timeout's
     * message), or null: none failed yet. The halves of a refused batch start with null: they were not
     * refused themselves (the refusal is in their {@link #splitDepth}).
     */
    StellflowException lastError;

    /**
     * The broker's refusal of this batch, sent alone, as too large (MESSAGE_TOO_LARGE, as {@link
     * ProduceErrors#cause} gives it: usually a {@link RecordTooLargeException}),
     * while it waits for the sender to split it ({@link ProducerSplits}); null otherwise. A forced close
     * then says it was sent and refused, not "never sent" ({@link ProduceErrors#closedForcefully}).
     * Guarded by the accumulator lock.
     */
    StellflowException refusedAsTooLarge;

    /** Idempotence: the producer id, epoch and base sequence this batch was stamped with; -1 when unstamped. */
    long producerId = RecordBatchLayout.NO_PRODUCER_ID;

    short producerEpoch = RecordBatchLayout.NO_PRODUCER_EPOCH;
    int baseSequence = RecordBatchLayout.NO_SEQUENCE;
    /** With idempotence: this batch's place among the batches stamped on its partition ({@link ProducerIdempotence}). */
    long stampIndex;

    /**
     * With idempotence: an attempt under the current stamp got no verdict (no answer, or {@code
     * REQUEST_TIMED_OUT} / {@code NOT_ENOUGH_REPLICAS_AFTER_APPEND}), so the batch may be in the log
     * under that stamp; cleared only by the leader's {@code OUT_OF_ORDER_SEQUENCE_NUMBER} for it.
     * Such a batch is never stamped anew ({@link ProducerIdempotence#mustFailAfterReset}).
     */
    boolean mayBeAppended;

    /**
     * With idempotence: this batch is a part ({@link #halves}) of a batch that was {@link
     * #mayBeAppended}. The whole may be in the log, so the part keeps {@link #mayBeAppended} for good:
     * the leader's {@code OUT_OF_ORDER_SEQUENCE_NUMBER} for a part does not say the whole is absent
     * (the whole would be answered as a duplicate, not the part), so a part is never stamped anew.
     */
    boolean partOfMaybeAppended;

    /** Halvings that made this batch from the one first sent ({@link #halves}); 0 for a batch as built. */
    int splitDepth;

    /** A batch whose buffer comes straight from {@code alloc} (tests; see {@link ProducerBufferPool#of}). */
    ProducerBatch(
            TopicPartition tp,
            ByteBufAllocator alloc,
            int fillLimitBytes,
            double estimatedRatio,
            int firstRecordBytes,
            long baseTimestampMs,
            long nowNs,
            long sequence) {
        this(
                tp,
                ProducerBufferPool.of(alloc),
                fillLimitBytes,
                estimatedRatio,
                firstRecordBytes,
                baseTimestampMs,
                nowNs,
                sequence);
    }

    /**
     * A batch whose buffer comes from {@code buffers}: a recycling pool gives one of the whole
     * reservation at once (reused, so its size costs nothing per batch), an allocator one of about
     * {@code batch.size} that grows as records come (see below).
     */
    ProducerBatch(
            TopicPartition tp,
            ProducerBufferPool buffers,
            int fillLimitBytes,
            double estimatedRatio,
            int firstRecordBytes,
            long baseTimestampMs,
            long nowNs,
            long sequence) {
        this.tp = tp;
        this.sequence = sequence;
        this.splitIndex = 0;
        this.createdNs = nowNs;
        this.fillLimitBytes = fillLimitBytes;
        this.estimatedRatio = estimatedRatio;
        this.reservedBytes = Math.max(fillLimitBytes, RecordBatchLayout.HEADER_SIZE + firstRecordBytes);
        // With compression the fill limit is batch.size over the ratio (4.5 MB for the lab's 1 MiB
        // batches of zstd JSON), above the pool's 4 MiB chunks, so each batch would be a new unpooled
        // allocation, while a batch sealed at linger.ms holds far less (~1 MB at 200 MB/s and 5 ms):
        // start at about batch.size (pooled) and let the builder grow it; buffer.memory still counts
        // the whole reservation.
        // A recycling pool (the producer's, with compression or without) gives the whole
        // reservation: batch.size, or the header and the first record when that one is larger (the
        // batch then holds just it). The buffer is reused, so neither the size nor a growth copy is
        // paid per batch.
        int initialBytes = estimatedRatio >= 1.0 || buffers.recycles()
                ? reservedBytes
                : (int) Math.min(reservedBytes, Math.max(RecordBatchLayout.HEADER_SIZE + (long) firstRecordBytes, (long)
                        Math.ceil(fillLimitBytes * estimatedRatio)));
        this.buffers = buffers;
        this.buffer = buffers.take(initialBytes);
        this.builder = new RecordBatchBuilder(buffer, baseTimestampMs);
    }

    /**
     * A part of {@code whole} ({@link #halves}) of exactly {@code sizeBytes} uncompressed bytes: its
     * buffer and its {@code buffer.memory} reservation are that size, it keeps {@code whole}'s place
     * in the send order, creation time (for {@code delivery.timeout.ms}) and ratio estimate.
     */
    private ProducerBatch(
            ProducerBatch whole, ProducerBufferPool buffers, int sizeBytes, long baseTimestampMs, int splitIndex) {
        this.tp = whole.tp;
        this.sequence = whole.sequence;
        this.splitIndex = splitIndex;
        this.createdNs = whole.createdNs;
        this.fillLimitBytes = sizeBytes;
        this.estimatedRatio = whole.estimatedRatio;
        this.reservedBytes = sizeBytes;
        this.buffers = buffers;
        this.buffer = buffers.take(sizeBytes);
        this.builder = new RecordBatchBuilder(buffer, baseTimestampMs);
    }

    static int recordBytes(byte[] key, byte[] value) {
        return RECORD_OVERHEAD + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
    }

    /** Appends if the record fits in the fill limit (the first record always fits); else false. */
    boolean tryAppend(long timestampMs, byte[] key, byte[] value, Callback callback) {
        if (closed) {
            return false;
        }
        int size = recordBytes(key, value);
        if (builder.recordCount() > 0 && builder.sizeInBytes() + size > fillLimitBytes) {
            return false;
        }
        builder.append(timestampMs, key, value, List.of());
        int i = recordCount++;
        if (i == timestamps.length) {
            timestamps = Arrays.copyOf(timestamps, i * 2);
            callbacks = Arrays.copyOf(callbacks, i * 2);
        }
        timestamps[i] = timestampMs;
        callbacks[i] = callback;
        return true;
    }

    boolean isFull() {
        return closed || builder.sizeInBytes() + RECORD_OVERHEAD > fillLimitBytes;
    }

    int recordCount() {
        return recordCount;
    }

    /** Seals the batch (fills length, counts and CRC); idempotent. */
    void close() {
        close(true);
    }

    /**
     * Seals the batch; {@code withCrc} false leaves its CRC to whoever rewrites it before it is sent
     * ({@link #compress} writes a new batch with its own CRC, {@link #stampProducer} rewrites the
     * header and its CRC), so the sealed bytes are not summed twice. Idempotent (the first call
     * decides).
     */
    void close(boolean withCrc) {
        if (!closed) {
            builder.close(withCrc);
            closed = true;
        }
    }

    /**
     * Seals the batch without its CRC and sums its records section alone ({@link
     * RecordBatchLayout#recordsCrc}), for a batch {@link #stampProducer} stamps uncompressed: the
     * stamp then sums only the header and combines, so the records are read once, here, while they
     * are still in the cache, and not again on the sender thread. Idempotent (the first call decides).
     */
    void closeSummingRecords() {
        if (!closed) {
            builder.close(false);
            closed = true;
            if (recordCount > 0) {
                recordsCrc = RecordBatchLayout.recordsCrc(buffer, buffer.readerIndex());
                recordsCrcKnown = true;
            }
        }
    }

    /**
     * Idempotence: writes the producer id, epoch and base sequence into the sealed batch (compressed
     * or not; one batch, since an idempotent producer never compresses one in parts) and rewrites its CRC: from the
     * records' CRC taken at {@link #closeSummingRecords} when the records are those it summed, else
     * over the whole batch.
     *
     * @throws IllegalStateException when the batch is not sealed
     */
    void stampProducer(long producerId, short producerEpoch, int baseSequence) {
        if (!closed) {
            throw new IllegalStateException("stamp before close: " + tp);
        }
        if (recordsCrcKnown && !compressed) {
            RecordBatchLayout.setProducerFields(
                    buffer, buffer.readerIndex(), producerId, producerEpoch, baseSequence, recordsCrc);
        } else {
            RecordBatchLayout.setProducerFields(buffer, buffer.readerIndex(), producerId, producerEpoch, baseSequence);
        }
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.baseSequence = baseSequence;
    }

    int sizeInBytes() {
        return buffer.readableBytes();
    }

    /** Batches in the bytes: 1, or the parts of a batch {@link #compress} split; no index change. */
    int batchCount() {
        return RecordBatchValidator.batchCount(buffer);
    }

    /**
     * Bytes this batch is expected to take on the wire: its size once compressed (or without
     * compression), else its uncompressed size times the estimated ratio (for {@code
     * max.request.size} before the sender compresses it).
     */
    int wireSizeEstimateBytes() {
        return compressed || estimatedRatio >= 1.0
                ? buffer.readableBytes()
                : (int) Math.ceil(buffer.readableBytes() * estimatedRatio);
    }

    /** Uncompressed size at which this batch was full (see the class comment). */
    int fillLimitBytes() {
        return fillLimitBytes;
    }

    boolean isCompressed() {
        return compressed;
    }

    /** Uncompressed size of a compressed batch (0 before {@link #compress}). */
    int uncompressedBytes() {
        return uncompressedBytes;
    }

    /**
     * The thread that took the sealed batch from the {@link ProducerCompressionQueue} (outside the
     * accumulator lock): compresses it into a new direct buffer of {@code alloc} and releases the
     * uncompressed one. Idempotent (a retried batch stays as it was sent first). On an exception the batch is
     * unchanged (still uncompressed, its buffer still held) and the new buffer released.
     *
     * <p>The compressed batch is at most {@code maxBatchBytes} unless it holds one record: when the
     * ratio estimate was too low and the whole batch compresses to more, its records are compressed
     * as two or more consecutive batches (halves, recursively) in the same buffer, each within the
     * limit. The broker appends them together, so record i still gets offset {@code baseOffset + i}.
     * This is rare (the estimate goes up at once after a batch larger than estimated) and allocates a
     * record object per record; the usual path does not.
     *
     * @return compressed size / uncompressed size of this batch
     * @throws IllegalStateException when the batch is not sealed
     */
    double compress(CompressionCodec codec, ByteBufAllocator alloc, int maxBatchBytes) {
        return compress(codec, ProducerBufferPool.of(alloc), maxBatchBytes);
    }

    /** {@link #compress(CompressionCodec, ByteBufAllocator, int)} into a buffer of {@code outBuffers}. */
    double compress(CompressionCodec codec, ProducerBufferPool outBuffers, int maxBatchBytes) {
        if (!closed) {
            throw new IllegalStateException("compress before close: " + tp);
        }
        if (compressed) {
            return (double) buffer.readableBytes() / uncompressedBytes;
        }
        int size = buffer.readableBytes();
        // Sized for the estimate plus 1/8: a batch that compresses as the partition's last ones
        // did is written without growing the buffer.
        int initialBytes = (int)
                Math.min((long) size + 64, RecordBatchLayout.HEADER_SIZE + 64 + (long) (size * estimatedRatio * 1.125));
        ByteBuf out = outBuffers.take(initialBytes);
        try {
            BatchCompression.compress(buffer, buffer.readerIndex(), codec, out);
            if (out.readableBytes() > maxBatchBytes && recordCount > 1) {
                out.clear();
                // Unchecked CRC: our own sealed bytes, maybe sealed without one (close(false)).
                List<DecodedRecord> records = RecordBatchReader.decode(buffer, 0, false);
                compressInParts(records, 0, records.size(), codec, maxBatchBytes, out);
            }
        } catch (RuntimeException e) {
            outBuffers.give(out);
            throw e;
        }
        buffers.give(buffer);
        buffer = out;
        buffers = outBuffers;
        uncompressedBytes = size;
        compressed = true;
        return (double) out.readableBytes() / size;
    }

    /** Appends records [from, to) of {@code records} to {@code b} as they were (timestamps, keys, values, headers). */
    private static void append(RecordBatchBuilder b, List<DecodedRecord> records, int from, int to) {
        for (int i = from; i < to; i++) {
            DecodedRecord r = records.get(i);
            b.append(r.timestampMs(), r.key(), r.value(), r.headers());
        }
    }

    /** Appends records [from, to) to {@code out} as compressed batches of at most {@code maxBatchBytes} (halving). */
    private static void compressInParts(
            List<DecodedRecord> records, int from, int to, CompressionCodec codec, int maxBatchBytes, ByteBuf out) {
        ByteBuf plain = Unpooled.buffer();
        try {
            RecordBatchBuilder b =
                    new RecordBatchBuilder(plain, records.get(from).timestampMs());
            append(b, records, from, to);
            b.close();
            int start = out.writerIndex();
            BatchCompression.compress(plain, 0, codec, out);
            if (out.writerIndex() - start > maxBatchBytes && to - from > 1) {
                out.writerIndex(start);
                int mid = (from + to) >>> 1;
                compressInParts(records, from, mid, codec, maxBatchBytes, out);
                compressInParts(records, mid, to, codec, maxBatchBytes, out);
            }
        } finally {
            plain.release();
        }
    }

    /**
     * This sealed batch's records as two new open batches of {@code buffers}, the first with records
     * [0, n/2), the second with [n/2, n) (n = {@link #recordCount}, at least 2), for a batch the broker
     * refused as too large (MESSAGE_TOO_LARGE): record i keeps its callback and timestamp, so its
     * future completes with its own offset. The records are read from the sealed bytes, decompressed
     * when {@link #isCompressed} (all the batches {@link #compress} may have written); the parts are
     * uncompressed, each sized to its records, and take this batch's place in the send order
     * ({@link #splitIndex}). Allocates a record object per record: the rare path of a refused batch.
     * This batch is left as it was (the caller releases it); on an exception no buffer is kept.
     *
     * @throws IllegalStateException when the batch is not sealed, holds one record, or its bytes do
     *     not hold its records (a bug)
     */
    ProducerBatch[] halves(ProducerBufferPool buffers) {
        if (!closed || recordCount < 2) {
            throw new IllegalStateException(
                    "split of " + tp + ": " + recordCount + " record(s), " + (closed ? "sealed" : "open"));
        }
        List<DecodedRecord> records = decodeRecords();
        if (records.size() != recordCount) {
            throw new IllegalStateException(
                    "split of " + tp + ": " + records.size() + " records decoded, " + recordCount + " appended");
        }
        int mid = recordCount >>> 1;
        ProducerBatch first = part(records, 0, mid, buffers);
        try {
            return new ProducerBatch[] {first, part(records, mid, recordCount, buffers)};
        } catch (RuntimeException e) {
            first.release();
            throw e;
        }
    }

    /** The records of the sealed bytes, expanded when compressed; CRCs unchecked (our own bytes). */
    private List<DecodedRecord> decodeRecords() {
        if (!compressed) {
            return RecordBatchReader.decode(buffer, 0, false);
        }
        List<DecodedRecord> records = new ArrayList<>(recordCount);
        // Each batch's records are at most the whole uncompressed batch (the cap guards nothing here).
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(Math.max(uncompressedBytes, 1))) {
            RecordBatchReader.decode(
                    buffer,
                    0,
                    false,
                    d,
                    (offset, timestampMs, key, value, headers) ->
                            records.add(new DecodedRecord(offset, timestampMs, key, value, headers)));
        }
        return records;
    }

    /** A new open batch of records [from, to) of {@code records}, with their callbacks and timestamps. */
    private ProducerBatch part(List<DecodedRecord> records, int from, int to, ProducerBufferPool buffers) {
        int size = RecordBatchLayout.HEADER_SIZE;
        for (int i = from; i < to; i++) {
            DecodedRecord r = records.get(i);
            size += RecordBatchBuilder.recordSizeInBytes(
                    r.key() == null ? 0 : r.key().length, r.value() == null ? 0 : r.value().length, r.headers());
        }
        ProducerBatch part =
                new ProducerBatch(this, buffers, size, records.get(from).timestampMs(), splitIndex + from);
        try {
            append(part.builder, records, from, to);
        } catch (RuntimeException e) {
            part.release();
            throw e;
        }
        part.callbacks = Arrays.copyOfRange(callbacks, from, to);
        part.timestamps = Arrays.copyOfRange(timestamps, from, to);
        part.recordCount = to - from;
        return part;
    }

    /**
     * The sealed batch bytes (after {@link #compress}, one or more compressed batches); the view
     * does not change the batch's indexes or reference count.
     */
    ByteBuf bytes() {
        return buffer.duplicate();
    }

    /** Completes record i with offset {@code baseOffset + i}; called outside the lock. */
    void complete(long baseOffset) {
        release();
        for (int i = 0; i < recordCount; i++) {
            call(callbacks[i], new RecordMetadata(tp.topic(), tp.partition(), baseOffset + i, timestamps[i]), null);
        }
    }

    void fail(RuntimeException e) {
        release();
        for (int i = 0; i < recordCount; i++) {
            call(callbacks[i], null, e);
        }
    }

    /**
     * Calls one record's callback (none when null); what it throws, an Error such as a failed
     * assertion included, is logged and the other records still complete. Only a {@link
     * VirtualMachineError} (out of memory, stack overflow) is thrown on.
     */
    static void call(Callback callback, RecordMetadata metadata, Exception exception) {
        if (callback == null) {
            return;
        }
        try {
            callback.onCompletion(metadata, exception);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            LOG.warn("A send callback threw; the other records of the batch are completed anyway", t);
        }
    }

    void release() {
        if (!released) {
            released = true;
            buffers.give(buffer);
        }
    }
}
