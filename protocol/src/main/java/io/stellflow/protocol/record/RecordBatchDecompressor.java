package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.HEADER_SIZE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import java.util.Arrays;

/**
 * Consumer side of decision 9.o: expands one compressed batch into an equivalent uncompressed batch
 * in a reusable buffer, so the uncompressed reader and validator run on it unchanged. The expanded
 * batch is {@link BatchCompression#decompress}'s: the 57 header bytes of the original with attributes
 * bits 0-2 cleared, batchLength and CRC set for the decompressed records (the caller checks the CRC
 * on the compressed bytes, as sent, before expanding).
 *
 * <p>Memory: one heap buffer per instance, grown by doubling to the largest batch seen (at most
 * {@code maxDecompressedBytes} + 57) and reused for every batch; decompressors are made on first use
 * of each codec and reused. No allocation per record.
 *
 * <p>Errors: a stream that is not a valid container, or holds more than the cap, throws {@link
 * ProtocolException} with {@code CORRUPT_MESSAGE} (malformed) or {@code INVALID_RECORD} (over the
 * cap, undefined codec) and a message naming the
 * codec and the reason; the cap guards against decompression bombs (the output stops at cap + 1
 * bytes).
 *
 * <p>Thread-safety: confined to one owning thread (a consumer's application thread).
 */
public final class RecordBatchDecompressor implements AutoCloseable {
    /** Told of each batch expanded (a consumer's compression metrics). */
    @FunctionalInterface
    public interface Listener {
        /** Does nothing. */
        Listener NONE = (type, compressedBytes, decompressedBytes, elapsedNs) -> {};

        /**
         * One batch expanded: its codec, the records section compressed (bytes, as received) and
         * decompressed (bytes), and the time decompression took (ns). Called on the expanding thread
         * once per batch, never per record; must be cheap. Not called for a batch that failed, nor
         * for any batch of a set {@link #expandAll} gave up on (its caller decodes that set itself).
         */
        void expanded(CompressionType type, long compressedBytes, long decompressedBytes, long elapsedNs);
    }

    private final long maxDecompressedBytes;
    private final Listener listener;
    private final Decompressor[] decompressors = new Decompressor[CompressionType.values().length];
    /** Made at the first {@link #expand} (an instance that only {@link #expandAll}s never needs it). */
    private ByteBuf scratch;

    /** Longs {@link #pending} keeps per batch. */
    private static final int PENDING_LONGS = 4;

    /**
     * {@link #expandAll}'s batches heard of but not yet told to the listener (it is told only once
     * the whole set expanded, so a set given up on and then decoded by the caller batch by batch is
     * counted once): {@value #PENDING_LONGS} longs per batch, the codec's id, compressed bytes,
     * decompressed bytes and ns. Grown, never shrunk: no allocation per answer once as large as the
     * largest one.
     */
    private long[] pending = new long[16 * PENDING_LONGS];

    private int pendingBatches;

    private boolean closed;

    /**
     * @param maxDecompressedBytes the largest decompressed records section accepted for one batch
     * @throws IllegalArgumentException when the cap is not positive
     */
    public RecordBatchDecompressor(long maxDecompressedBytes) {
        this(maxDecompressedBytes, Listener.NONE);
    }

    /**
     * @param maxDecompressedBytes the largest decompressed records section accepted for one batch
     * @param listener told of each batch expanded
     * @throws IllegalArgumentException when the cap is not positive or the listener null
     */
    public RecordBatchDecompressor(long maxDecompressedBytes, Listener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        this.listener = listener;
        if (maxDecompressedBytes <= 0) {
            throw new IllegalArgumentException("maxDecompressedBytes must be > 0: " + maxDecompressedBytes);
        }
        this.maxDecompressedBytes = maxDecompressedBytes;
    }

    /** The cap on the decompressed records section of one batch (bytes). */
    public long maxDecompressedBytes() {
        return maxDecompressedBytes;
    }

    /**
     * Expands the compressed batch at {@code buf}'s {@code batchStart} (framing already checked; its
     * attributes name codec 1-4). The returned buffer holds the expanded batch from index 0 to its
     * writerIndex; it is this instance's buffer, valid until the next call, never to be released by
     * the caller.
     *
     * @throws ProtocolException CORRUPT_MESSAGE when the stream is malformed, INVALID_RECORD when it holds more than the cap
     *     or the attributes name an undefined codec
     * @throws IllegalStateException when closed
     */
    public ByteBuf expand(ByteBuf buf, int batchStart) {
        if (closed) {
            throw new IllegalStateException("decompressor closed");
        }
        int attributes = RecordBatchLayout.attributes(buf, batchStart);
        CompressionType type = CompressionType.forId(attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK);
        if (type == null || type == CompressionType.NONE) {
            throw new ProtocolException(
                    Errors.INVALID_RECORD, "attributes " + Integer.toHexString(attributes) + " name no codec");
        }
        Decompressor d = decompressor(type);
        if (scratch == null) {
            scratch = Unpooled.buffer(HEADER_SIZE + 64 * 1024);
        }
        ByteBuf out = scratch.clear();
        long startNs = System.nanoTime();
        int n = BatchCompression.decompress(buf, batchStart, d, maxDecompressedBytes, out);
        if (n == BatchCompression.MALFORMED) {
            throw new ProtocolException(
                    Errors.CORRUPT_MESSAGE, type.configName() + " stream is malformed: " + d.failureReason());
        }
        if (n == BatchCompression.OVER_CAP) {
            throw new ProtocolException(
                    Errors.INVALID_RECORD,
                    type.configName() + " stream decompresses to more than " + maxDecompressedBytes + " bytes");
        }
        listener.expanded(
                type,
                RecordBatchLayout.batchSize(buf, batchStart) - HEADER_SIZE,
                n - HEADER_SIZE,
                System.nanoTime() - startNs);
        return out;
    }

    /**
     * The codec of the first batch of the set between readerIndex and writerIndex, from its header
     * alone (constant time: the consumer's I/O thread asks it of every Fetch answer); {@link
     * CompressionType#NONE} when that batch is uncompressed or the set holds no framed batch, null
     * when its codec bits name no codec.
     */
    public static CompressionType firstBatchCodec(ByteBuf recordSet) {
        int pos = recordSet.readerIndex();
        if (RecordBatchValidator.framedBatchLength(recordSet, pos, recordSet.writerIndex()) < 0) {
            return CompressionType.NONE;
        }
        return CompressionType.forId(
                RecordBatchLayout.attributes(recordSet, pos) & RecordBatchLayout.COMPRESSION_CODEC_MASK);
    }

    /**
     * Appends to {@code out} the whole set between readerIndex and writerIndex of {@code recordSet}
     * with every compressed batch expanded as {@link #expand} does, and every uncompressed one copied
     * as it is: the set a reader decodes with {@link RecordBatchReader}'s CRC check off, record for
     * record what decoding {@code recordSet} with this decompressor gives. Checked here: each batch's
     * framing and magic, its CRC-32C on the bytes as sent when {@code checkCrc}, and then, on the
     * bytes just written to {@code out}, everything else the reader checks (attributes, counts, record
     * structure: {@link RecordBatchValidator} steps 3 and 5-7), so the result is decoded with {@link
     * RecordBatchReader#decodeExpanded}, which does not walk the records a second time. The expanded
     * batches' CRC field is left 0 (not recomputed). Neither buffer's indexes change but {@code out}'s
     * writerIndex; nothing is retained or released.
     *
     * <p>Why the records are checked here: the walk reads one field behind each record's value, a
     * cache line nothing else touches first. Right after the batch was written it is in this
     * thread's cache; on the reader's thread, an answer later, it was a memory load per record, about
     * a quarter of a consumer's decoding time on the lab's 1 KiB zstd records (issue #21).
     *
     * <p>Used ahead of the reader, on another thread than it (the consumer expands a Fetch answer
     * while its application decodes the one before), so it never throws for bad input: a batch that
     * fails a check, a malformed stream, a batch over {@link #maxDecompressedBytes} or a set over
     * {@code maxSetBytes} all give -1 with {@code out} back at its old writerIndex, and the caller
     * decodes {@code recordSet} itself, which reports the error the usual way. The listener hears
     * of the set's batches only once it expanded whole, after the last one: a set given up on is
     * counted by the decoding that follows, not twice.
     *
     * @param maxSetBytes the most bytes to append; -1 beyond it
     * @return the bytes appended, or -1 (above)
     * @throws IllegalStateException when closed
     */
    public int expandAll(ByteBuf recordSet, boolean checkCrc, long maxSetBytes, ByteBuf out) {
        if (closed) {
            throw new IllegalStateException("decompressor closed");
        }
        int outStart = out.writerIndex();
        int end = recordSet.writerIndex();
        pendingBatches = 0;
        for (int pos = recordSet.readerIndex(); pos < end; ) {
            int batchLength = RecordBatchValidator.framedBatchLength(recordSet, pos, end);
            if (batchLength < 0
                    || RecordBatchLayout.magic(recordSet, pos) != RecordBatchLayout.MAGIC
                    || (checkCrc
                            && RecordBatchLayout.computeCrc(recordSet, pos) != RecordBatchLayout.crc(recordSet, pos))) {
                return notExpanded(out, outStart);
            }
            int size = RecordBatchLayout.LOG_OVERHEAD + batchLength;
            int batchOut = out.writerIndex();
            long room = maxSetBytes - (batchOut - outStart);
            int attributes = RecordBatchLayout.attributes(recordSet, pos);
            CompressionType type = CompressionType.forId(attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK);
            if (type == CompressionType.NONE) {
                if (size > room) {
                    return notExpanded(out, outStart);
                }
                out.writeBytes(recordSet, pos, size);
            } else {
                if (type == null || room <= BatchCompression.HEADER_BYTES) {
                    return notExpanded(out, outStart);
                }
                Decompressor d = decompressor(type);
                long startNs = System.nanoTime();
                int n = BatchCompression.decompress(
                        recordSet,
                        pos,
                        d,
                        Math.min(maxDecompressedBytes, room - BatchCompression.HEADER_BYTES),
                        out,
                        false);
                if (n < 0) {
                    return notExpanded(out, outStart);
                }
                pending(type, size - HEADER_SIZE, n - HEADER_SIZE, System.nanoTime() - startNs);
            }
            if (RecordBatchValidator.validateBatch(out, batchOut, true, true, false) != Errors.NONE) {
                return notExpanded(out, outStart);
            }
            pos += size;
        }
        for (int i = 0; i < pendingBatches * PENDING_LONGS; i += PENDING_LONGS) {
            listener.expanded(CompressionType.forId((int) pending[i]), pending[i + 1], pending[i + 2], pending[i + 3]);
        }
        return out.writerIndex() - outStart;
    }

    /** Keeps one expanded batch's figures until its set is known to have expanded whole. */
    private void pending(CompressionType type, long compressedBytes, long decompressedBytes, long elapsedNs) {
        int i = pendingBatches * PENDING_LONGS;
        if (i == pending.length) {
            pending = Arrays.copyOf(pending, 2 * i);
        }
        pending[i] = type.id();
        pending[i + 1] = compressedBytes;
        pending[i + 2] = decompressedBytes;
        pending[i + 3] = elapsedNs;
        pendingBatches++;
    }

    /** Gives up on a set: {@code out} back as it was (its batches' figures are never told). */
    private static int notExpanded(ByteBuf out, int outStart) {
        out.writerIndex(outStart);
        return -1;
    }

    private Decompressor decompressor(CompressionType type) {
        Decompressor d = decompressors[type.id()];
        if (d == null) {
            try (CompressionCodec codec = CompressionCodecs.codec(type)) {
                d = codec.newDecompressor();
            }
            decompressors[type.id()] = d;
        }
        return d;
    }

    /** Frees the decompressors' native state and drops the buffer; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < decompressors.length; i++) {
            if (decompressors[i] != null) {
                decompressors[i].close();
                decompressors[i] = null;
            }
        }
        if (scratch != null) {
            scratch.release();
        }
    }
}
