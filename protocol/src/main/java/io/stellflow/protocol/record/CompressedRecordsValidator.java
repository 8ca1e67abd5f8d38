package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.MIN_RECORD_LENGTH;
import static io.stellflow.protocol.record.RecordBatchLayout.RECORD_LENGTH_SIZE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import java.nio.ByteBuffer;

/**
 * Step 7 of {@code docs/spec/wire-protocol.md} §7.7 for a compressed batch (decision 9.o): streams
 * the records section (every byte after {@code recordCount}) through its codec's {@link
 * Decompressor} into one reusable direct chunk of {@value #CHUNK_BYTES} bytes and checks every
 * record as {@link RecordBatchValidator} checks an uncompressed batch: {@code length >= 25}, the
 * fields consume exactly {@code length} bytes, record attributes 0, {@code offsetDelta} equal to the
 * index, key, value and header lengths {@code >= -1} and inside the record, header count {@code >=
 * 0}, header keys valid UTF-8, exactly {@code recordCount} records and nothing after the last one.
 * A field that straddles two chunks is moved to the front of the chunk (at most a header key, 32,767
 * bytes) before the next read.
 *
 * <p>One exception to the chunk: a zstd frame whose header declares a content size above the chunk
 * and at most {@value #REGION_MAX_BYTES} bytes, the cap and {@value #ONE_PASS_MAX_RATIO} times the
 * compressed bytes (our producer's batches) is decoded straight into one reusable direct region at
 * least that large ({@link Decompressor#singlePassBytes}), which spares zstd its window buffer and
 * the copy out of it. Where the library allows ({@link Decompressor#readInPlace}) it is decoded in
 * steps of about 64 KiB of input, each walked while still in the core's cache (the walk of a 4.7 MB
 * region written first took a tenth of the broker's CPU on zstd produce: each record's first bytes
 * a cache miss); else in one call, then walked. The region is never rewound while it has room.
 * Frames after the first go into the rest of the region. A header that lies gets the batch refused:
 * {@link #MALFORMED}, including a frame given one-pass room that holds more than it declares (zstd
 * stops at the room given: refused as corrupt where a streamed frame would stop at the cap, {@link
 * #OVER_CAP}); or {@link #INVALID_RECORDS} when, read in steps or streamed, a record before the
 * point where zstd notices the lie breaks a rule.
 *
 * <p>Outcomes ({@link #outcome} after each batch, what the caller logs): {@link #VALID}; {@link
 * #INVALID_RECORDS} (the container decoded but its records break a rule: {@code INVALID_RECORD});
 * {@link #MALFORMED} (not a valid container of the codec: truncated, bad magic or checksum, trailing
 * garbage; {@code CORRUPT_MESSAGE}, {@link #failureReason} has the library's reason); {@link
 * #OVER_CAP} (the records decompress to more than {@link #maxDecompressedBytes}: a decompression bomb
 * or an oversized batch; {@code INVALID_RECORD}). The cap is the owner's configuration, never a size
 * the producer declares, so a bomb costs at most cap + 1 bytes of output (one region is used only
 * for a declared size within the cap).
 *
 * <p>Allocation: none per record. Per batch, the NIO and Netty views the decompressor takes of the
 * compressed bytes, and for lz4 and snappy the libraries' stream objects ({@code
 * docs/compression.md}, "Allocation"). Memory: the chunk, and the region once a batch needs it,
 * grown to the largest such batch (at most {@value #REGION_MAX_BYTES} bytes and the cap, direct,
 * kept).
 *
 * <p>Thread-safety: confined to one owning thread (an append agent, a request thread); the
 * decompressors keep native state reused from batch to batch. {@link #close} frees it.
 */
public final class CompressedRecordsValidator implements AutoCloseable {
    /** The batch's records are valid. */
    public static final int VALID = 0;
    /** The container decoded but a record breaks a §7.7 step 7 rule, or the count is wrong. */
    public static final int INVALID_RECORDS = 1;
    /** The bytes are not a valid container of the batch's codec ({@link #failureReason}). */
    public static final int MALFORMED = 2;
    /** The records decompress to more than {@link #maxDecompressedBytes}. */
    public static final int OVER_CAP = 3;

    /**
     * The chunk the record walk reads: 128 KiB. More than the largest field that must be contiguous
     * (a header key, at most 32,767 bytes, or an 8-byte fixed field) plus an LZ4 block's default 64
     * KiB: with at most 32 KiB left over when the walk asks for more, lz4 decodes each block straight
     * into it (no copy through the library's block array), and the chunk still fits a core's L2.
     */
    static final int CHUNK_BYTES = 128 * 1024;

    /**
     * The largest batch decompressed into one region instead of the chunk: 8 MiB, above the 4.7 MB a
     * 1 MiB zstd batch of JSON log lines holds. A codec that decodes a frame in one pass when the
     * output has room for all of it ({@link Decompressor#singlePassBytes}: zstd) then skips its window
     * buffer and the copy out of it; the walk reads the region after. The region is made at the first
     * such batch, grows (by halves) to the largest one seen, never past this size or the cap, and is
     * kept, refused batches or not (dropping it would let refused batches make each next batch
     * allocate again; zstd keeps its own window buffer the same way). Memory: at most this much
     * direct memory per validating thread (append agents; request threads only without them), and
     * only on threads that saw such batches.
     */
    static final int REGION_MAX_BYTES = 8 << 20;

    /**
     * The most a batch may declare per compressed byte to get the one-pass region: 64, about 14 times
     * what zstd makes of our JSON log lines (4.7x); beyond it the batch streams through the chunk
     * (correct, a little slower), so a few bytes that declare megabytes cost no region.
     */
    static final int ONE_PASS_MAX_RATIO = 64;

    /**
     * The broker's default cap ({@code compression.max.decompressed.bytes}): 64 MiB, 64 times the
     * default {@code message.max.bytes}, above the 5x our JSON log lines compress by with zstd
     * ({@code docs/compression.md}) and small enough that a bomb costs about a tenth of a second of
     * lz4 decoding on one core.
     */
    public static final long DEFAULT_MAX_DECOMPRESSED_BYTES = 64L << 20;

    /** Told about each valid compressed batch (the broker's compression metrics). */
    public interface Listener {
        /** Does nothing. */
        Listener NONE = (type, compressedBytes, decompressedBytes, elapsedNs) -> {};

        /**
         * One compressed batch validated: its codec, records section size, decompressed size and the
         * time decompression and the record walk took. Called on the validating thread; must be cheap.
         */
        void validated(CompressionType type, long compressedBytes, long decompressedBytes, long elapsedNs);
    }

    private final long maxDecompressedBytes;
    private final Listener listener;
    private final Decompressor[] decompressors = new Decompressor[CompressionType.values().length];
    private final ByteBuffer chunkMemory;
    private final ByteBuf chunkBuf;
    /** The one-pass region ({@link #REGION_MAX_BYTES}): made at the first batch that can use it, grown, kept. */
    private ByteBuffer regionMemory;

    private ByteBuf regionBuf;
    /** What the walk reads this batch: {@link #chunkBuf}, or {@link #regionBuf} with its memory. */
    private ByteBuffer bufMemory;

    private ByteBuf buf;

    private Decompressor current;
    private int streamCode;
    private int outcome = VALID;
    private CompressionType lastType;
    private long lastDecompressedBytes;
    private boolean requireKeys;
    /** The rule of the last {@link #INVALID_RECORDS} outcome (a constant string: no allocation). */
    private String invalidReason = "";

    private boolean lastInPlace;
    private int reads;
    private boolean closed;

    /**
     * @param maxDecompressedBytes hard cap on the decompressed records of one batch, in bytes (>= 0)
     * @throws IllegalArgumentException for a negative cap
     */
    public CompressedRecordsValidator(long maxDecompressedBytes) {
        this(maxDecompressedBytes, Listener.NONE);
    }

    /**
     * @param maxDecompressedBytes hard cap on the decompressed records of one batch, in bytes (>= 0)
     * @param listener told about every valid batch, with its time ({@link System#nanoTime}, twice per
     *     batch, only when not {@link Listener#NONE})
     * @throws IllegalArgumentException for a negative cap
     */
    public CompressedRecordsValidator(long maxDecompressedBytes, Listener listener) {
        this.listener = listener;
        if (maxDecompressedBytes < 0) {
            throw new IllegalArgumentException("maxDecompressedBytes must be >= 0: " + maxDecompressedBytes);
        }
        this.maxDecompressedBytes = maxDecompressedBytes;
        // A plain direct ByteBuffer wrapped once: no reference count to leak, freed with this object.
        this.chunkMemory = ByteBuffer.allocateDirect(CHUNK_BYTES);
        this.chunkBuf = Unpooled.wrappedBuffer(chunkMemory);
        chunkBuf.clear();
        this.bufMemory = chunkMemory;
        this.buf = chunkBuf;
    }

    /** The configured cap on one batch's decompressed records, in bytes. */
    public long maxDecompressedBytes() {
        return maxDecompressedBytes;
    }

    /**
     * From the next batch on, a record with a null key is {@link #INVALID_RECORDS} (a compacted
     * topic: the uncompressed path checks the same with {@code acceptsKeys}).
     */
    public void requireKeys(boolean requireKeys) {
        this.requireKeys = requireKeys;
    }

    /**
     * Validates the records of one compressed batch whose header (steps 3-6) already passed.
     *
     * @param compressed the records section (every byte after recordCount) between readerIndex and
     *     writerIndex; indexes and reference count unchanged, not retained
     * @param type the batch's codec (not {@link CompressionType#NONE})
     * @param recordCount the header's recordCount (>= 1)
     * @param baseTimestampMs the header's baseTimestamp
     * @param maxTimestamps where the batch's real max record timestamp goes on success (may be null)
     * @return {@link Errors#NONE}, {@link Errors#INVALID_RECORD} ({@link #INVALID_RECORDS}, {@link
     *     #OVER_CAP}) or {@link Errors#CORRUPT_MESSAGE} ({@link #MALFORMED}); {@link #outcome} says
     *     which
     * @throws IllegalStateException when closed
     */
    public short validate(
            ByteBuf compressed,
            CompressionType type,
            int recordCount,
            long baseTimestampMs,
            BatchMaxTimestamps maxTimestamps) {
        if (closed) {
            throw new IllegalStateException("validator closed");
        }
        long startNs = listener == Listener.NONE ? 0 : System.nanoTime();
        current = decompressor(type);
        lastType = type;
        current.reset(compressed, maxDecompressedBytes);
        selectBuffer(current.singlePassBytes(), compressed.readableBytes());
        buf.clear();
        // False: the first read fills the region in one call instead.
        lastInPlace = buf == regionBuf && current.readInPlace();
        reads = 0;
        streamCode = 0;
        outcome = walk(recordCount, baseTimestampMs, maxTimestamps);
        lastDecompressedBytes = current.decompressedBytes();
        if (outcome == VALID && listener != Listener.NONE) {
            listener.validated(type, compressed.readableBytes(), lastDecompressedBytes, System.nanoTime() - startNs);
        }
        return switch (outcome) {
            case VALID -> Errors.NONE;
            case MALFORMED -> Errors.CORRUPT_MESSAGE;
            default -> Errors.INVALID_RECORD;
        };
    }

    /** The outcome of the last {@link #validate}: {@link #VALID}, {@link #INVALID_RECORDS}, {@link #MALFORMED} or {@link #OVER_CAP}. */
    public int outcome() {
        return outcome;
    }

    /** The last {@link #validate} read its records from the one-pass region, not the chunk (tests). */
    boolean lastInOneRegion() {
        return buf == regionBuf;
    }

    /** The last {@link #validate} asked for its first frame in place and the decompressor agreed (tests). */
    boolean lastInPlace() {
        return lastInPlace;
    }

    /** Reads of the decompressor the last {@link #validate} made, final code included (tests). */
    int lastReads() {
        return reads;
    }

    /** Bytes of the one-pass region kept for the next batch, 0 when none (tests). */
    int regionBytes() {
        return regionMemory == null ? 0 : regionMemory.capacity();
    }

    /** Forgets the last outcome (a new record set starts: a refusal of it is not a compressed batch's yet). */
    void clearOutcome() {
        outcome = VALID;
    }

    /** The codec of the last batch validated, null before the first. */
    public CompressionType lastType() {
        return lastType;
    }

    /** Decompressed bytes the last {@link #validate} read (at most the cap). */
    public long lastDecompressedBytes() {
        return lastDecompressedBytes;
    }

    /** Why the last batch was refused, for a log line: the library's reason, or this class's; null when valid. */
    public String failureReason() {
        return switch (outcome) {
            case VALID -> null;
            case MALFORMED -> current.failureReason();
            case OVER_CAP -> "decompressed records exceed " + maxDecompressedBytes + " bytes";
            default -> invalidReason + " (spec 7.7 step 7)";
        };
    }

    /**
     * The walk's buffer for this batch: the one-pass region when the decompressor can fill it in one
     * pass ({@link #onePassBytes}), else the chunk.
     */
    private void selectBuffer(long singlePassBytes, int compressedBytes) {
        if (onePassBytes(singlePassBytes, compressedBytes, maxDecompressedBytes) <= CHUNK_BYTES) {
            buf = chunkBuf;
            bufMemory = chunkMemory;
            return;
        }
        if (regionMemory == null || regionMemory.capacity() < singlePassBytes) {
            // Grown by halves so a run of slightly larger batches allocates a few times, not each time,
            // never past the region's bound or the cap; the old region goes with the GC (a plain direct
            // ByteBuffer: nothing to release).
            long grown = regionMemory == null
                    ? singlePassBytes
                    : Math.max(singlePassBytes, regionMemory.capacity() * 3L / 2);
            regionMemory =
                    ByteBuffer.allocateDirect((int) Math.min(grown, Math.min(REGION_MAX_BYTES, maxDecompressedBytes)));
            regionBuf = Unpooled.wrappedBuffer(regionMemory);
        }
        buf = regionBuf;
        bufMemory = regionMemory;
    }

    /**
     * The room to give a stream up front for a one-pass decode, or 0 for none: the decompressor's
     * {@link Decompressor#singlePassBytes} when it is at most {@link #REGION_MAX_BYTES}, the cap and
     * {@link #ONE_PASS_MAX_RATIO} times the compressed bytes. The ratio keeps a header's word from
     * costing more memory than the bytes sent could honestly expand to: a 20-byte frame that declares
     * 8 MiB streams through the chunk (and fails there) instead of growing the region.
     */
    static long onePassBytes(long singlePassBytes, int compressedBytes, long capBytes) {
        if (singlePassBytes <= 0
                || singlePassBytes > Math.min(REGION_MAX_BYTES, capBytes)
                || singlePassBytes > (long) ONE_PASS_MAX_RATIO * compressedBytes) {
            return 0;
        }
        return singlePassBytes;
    }

    private Decompressor decompressor(CompressionType type) {
        Decompressor d = decompressors[type.ordinal()];
        if (d == null) {
            try (var codec = CompressionCodecs.codec(type)) {
                d = codec.newDecompressor(); // stays usable after the codec closes
            }
            decompressors[type.ordinal()] = d;
        }
        return d;
    }

    private int walk(int recordCount, long baseTimestampMs, BatchMaxTimestamps maxTimestamps) {
        long maxTimestampDelta = Long.MIN_VALUE;
        for (int index = 0; index < recordCount; index++) {
            if (!ensure(RECORD_LENGTH_SIZE + MIN_RECORD_LENGTH)) { // a valid record has at least 29 bytes
                return failed();
            }
            int length = buf.readInt();
            if (length < MIN_RECORD_LENGTH) {
                return invalid("a record length below the minimum");
            }
            long left = length; // bytes of this record not yet consumed
            if (buf.readByte() != 0) {
                return invalid("record attributes not 0");
            }
            maxTimestampDelta = Math.max(maxTimestampDelta, buf.readLong());
            if (buf.readInt() != index) {
                return invalid("an offsetDelta out of sequence");
            }
            left -= 1 + 8 + 4;
            int keyLength = buf.readInt();
            left -= 4;
            if (keyLength < -1 || keyLength > left) {
                return invalid("a key length outside the record");
            }
            if (keyLength < 0 && requireKeys) {
                return invalid("a record without a key on a compacted topic (cleanup.policy=compact)");
            }
            if (keyLength > 0) {
                if (!skip(keyLength)) {
                    return failed();
                }
                left -= keyLength;
            }
            left = skipNullableBytes(left); // value
            if (left < 0) {
                return left == FIELD_STREAM_ENDED ? failed() : invalid("a value length outside the record");
            }
            left = skipHeaders(left);
            if (left < 0) {
                return left == FIELD_STREAM_ENDED ? failed() : invalid("a malformed record header");
            }
            if (left != 0) {
                return invalid("a record's fields do not fill its length");
            }
        }
        if (buf.isReadable()) {
            return invalid("more records or bytes than recordCount says");
        }
        rewind();
        int n = read();
        if (n > 0) {
            return invalid("more records or bytes than recordCount says");
        }
        if (n != Decompressor.END_OF_STREAM) {
            streamCode = n;
            return failed();
        }
        if (maxTimestamps != null) {
            maxTimestamps.add(baseTimestampMs + maxTimestampDelta);
        }
        return VALID;
    }

    /** A field read returned this: the stream ended or failed before the field ({@link #streamCode}). */
    private static final long FIELD_STREAM_ENDED = -1;
    /** A field read returned this: the field breaks a rule. */
    private static final long FIELD_INVALID = -2;

    /** Skips a nullable-bytes field; returns the record bytes left after it, or a FIELD_ code. */
    private long skipNullableBytes(long left) {
        if (left < 4) {
            return FIELD_INVALID;
        }
        if (!ensure(4)) {
            return FIELD_STREAM_ENDED;
        }
        int len = buf.readInt();
        left -= 4;
        if (len < -1 || len > left) {
            return FIELD_INVALID;
        }
        if (len > 0) {
            if (!skip(len)) {
                return FIELD_STREAM_ENDED;
            }
            left -= len;
        }
        return left;
    }

    private long skipHeaders(long left) {
        if (left < 4) {
            return FIELD_INVALID;
        }
        if (!ensure(4)) {
            return FIELD_STREAM_ENDED;
        }
        int count = buf.readInt();
        left -= 4;
        if (count < 0) {
            return FIELD_INVALID;
        }
        for (int i = 0; i < count; i++) {
            if (left < 2) {
                return FIELD_INVALID;
            }
            if (!ensure(2)) {
                return FIELD_STREAM_ENDED;
            }
            int keyLength = buf.readShort();
            left -= 2;
            if (keyLength < -1 || keyLength > left) {
                return FIELD_INVALID;
            }
            if (keyLength > 0) {
                if (!ensure(keyLength)) {
                    return FIELD_STREAM_ENDED;
                }
                // The buffer wraps bufMemory from index 0: the same absolute indexes.
                if (!Utf8.isValid(bufMemory, buf.readerIndex(), keyLength)) {
                    return FIELD_INVALID;
                }
                buf.skipBytes(keyLength);
                left -= keyLength;
            }
            left = skipNullableBytes(left);
            if (left < 0) {
                return left;
            }
        }
        return left;
    }

    /** The outcome when the stream stopped before the records did: truncated records, malformed or over the cap. */
    private int failed() {
        return switch (streamCode) {
            case Decompressor.MALFORMED -> MALFORMED;
            case Decompressor.OVER_CAP -> OVER_CAP;
            // END_OF_STREAM: fewer records than recordCount, or a cut record
            default -> invalid("fewer records than recordCount says, or a record cut short");
        };
    }

    /** {@link #INVALID_RECORDS}, with the rule the records broke for {@link #failureReason} (a constant). */
    private int invalid(String reason) {
        invalidReason = reason;
        return INVALID_RECORDS;
    }

    /**
     * Makes at least {@code bytes} (at most {@link #CHUNK_BYTES}) readable, moving what is left to
     * the chunk's front (the region's only once it is full) and reading more; false when the stream
     * ends or fails first ({@link #streamCode} says how).
     */
    private boolean ensure(int bytes) {
        while (buf.readableBytes() < bytes) {
            if (streamCode < 0) {
                return false;
            }
            if (!regionHasRoom()) {
                buf.discardReadBytes(); // at most bytes - 1 < 32 KiB moved
            }
            int n = read();
            if (n < 0) {
                streamCode = n;
                return false;
            }
        }
        return true;
    }

    /** Skips {@code bytes} of the stream; false when it ends or fails first. */
    private boolean skip(long bytes) {
        long left = bytes;
        while (true) {
            int take = (int) Math.min(left, buf.readableBytes());
            buf.skipBytes(take);
            left -= take;
            if (left == 0) {
                return true;
            }
            if (streamCode < 0) {
                return false;
            }
            rewind();
            int n = read();
            if (n < 0) {
                streamCode = n;
                return false;
            }
        }
    }

    private int read() {
        reads++;
        return current.read(buf);
    }

    /**
     * Empties the buffer for the next read, all of it having been read: the chunk always, the region
     * only once full. A region with room is appended to where the last read left it, as a frame read
     * in place requires ({@link Decompressor#readInPlace}).
     */
    private void rewind() {
        if (!regionHasRoom()) {
            buf.clear();
        }
    }

    /**
     * The walk reads the region and it still has room: it is appended to, never moved or rewound
     * (a frame read in place may still be writing into it, {@link Decompressor#readInPlace}).
     */
    private boolean regionHasRoom() {
        return buf == regionBuf && buf.isWritable();
    }

    /** Frees the decompressors' native state; idempotent. */
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
    }
}
