package io.stellflow.protocol.record;

import io.netty.buffer.ByteBuf;

/**
 * Byte layout of a magic-1 RecordBatch and its records ({@code docs/spec/wire-protocol.md} §7.1,
 * §7.4, §7.5). All integers are big-endian. Offsets are relative to the batch start ("batch
 * offset").
 *
 * <pre>
 *  0               4               8               12  13              17      19
 *  +---------------+---------------+---------------+---+---------------+-------+---------------+
 *  |baseOffsetDelta|  batchLength  |partLeaderEpoch|mag|    crc32c     | attrs |lastOffsetDelta|
 *  +---------------+---------------+---------------+---+---------------+-------+---------------+
 *  23                              31                              39
 *  +-------------------------------+-------------------------------+
 *  |         baseTimestamp         |          maxTimestamp         |
 *  +-------------------------------+-------------------------------+
 *  39                              47      49              53              57
 *  +-------------------------------+-------+---------------+---------------+--------------
 *  |           producerId          | epoch | baseSequence  |  recordCount  | records ...
 *  +-------------------------------+-------+---------------+---------------+--------------
 *  LOG_OVERHEAD = bytes 0..7 (baseOffsetDelta, batchLength); batchLength counts bytes 8..end,
 *  so the whole batch is 8 + batchLength bytes. CRC-32C covers bytes 17..end (batchLength - 9).
 *  Bytes 0..11 are outside the CRC: the broker may rewrite baseOffsetDelta and the epoch.
 *
 *  record (offsets relative to the record start):
 *  0        4     5                13          17           21+K         25+K+V
 *  +--------+-----+----------------+-----------+------------+------------+------------------
 *  | length |attrs| timestampDelta |offsetDelta| keyLen key | valLen val | hdrCount headers..
 *  +--------+-----+----------------+-----------+------------+------------+------------------
 *  each header: int16 keyLen (-1 = null), key UTF-8, int32 valueLen (-1 = null), value
 * </pre>
 *
 * <p>Worked example (spec §7.8, golden G2): one record, key {@code order-1001} (10 bytes), value
 * {@code {"amount":199}} (14 bytes), one header {@code content-type: application/json} (12 + 16 bytes).
 * Record length = 1 + 8 + 4 + (4+10) + (4+14) + 4 + (2+12) + (4+16) = 83, so the record takes 87
 * bytes; the batch takes 57 + 87 = 144 bytes and batchLength = 144 - 8 = 136. The CRC-32C over the
 * 127 bytes at offsets 17..143 is 0xA99A047F. The first 64 bytes, as a client sends them:
 *
 * <pre>
 *  0000  00 00 00 00 00 00 00 88 ff ff ff ff 01 a9 9a 04   baseOffsetDelta 0, batchLength 136, epoch -1, magic 1, crc
 *  0010  7f 00 00 00 00 00 00 00 00 01 96 b3 7c 74 00 00   attributes 0, lastOffsetDelta 0, baseTimestamp 1746768000000
 *  0020  00 01 96 b3 7c 74 00 ff ff ff ff ff ff ff ff ff   maxTimestamp, producerId -1
 *  0030  ff ff ff ff ff 00 00 00 01 00 00 00 53 00 00 00   producerEpoch -1, baseSequence -1, recordCount 1, length 83
 * </pre>
 *
 * <p>Accessors take an absolute batch start index and never move reader or writer indexes. They do
 * not check bounds beyond what {@link ByteBuf} checks (IndexOutOfBoundsException on a bug).
 * Thread-safety: stateless.
 */
public final class RecordBatchLayout {
    public static final int BASE_OFFSET_DELTA_OFFSET = 0;
    public static final int BATCH_LENGTH_OFFSET = 4;
    public static final int PARTITION_LEADER_EPOCH_OFFSET = 8;
    public static final int MAGIC_OFFSET = 12;
    public static final int CRC_OFFSET = 13;
    public static final int ATTRIBUTES_OFFSET = 17;
    public static final int LAST_OFFSET_DELTA_OFFSET = 19;
    public static final int BASE_TIMESTAMP_OFFSET = 23;
    public static final int MAX_TIMESTAMP_OFFSET = 31;
    public static final int PRODUCER_ID_OFFSET = 39;
    public static final int PRODUCER_EPOCH_OFFSET = 47;
    public static final int BASE_SEQUENCE_OFFSET = 49;
    public static final int RECORD_COUNT_OFFSET = 53;
    public static final int RECORDS_OFFSET = 57;
    /** Size in bytes of the fixed batch header. */
    public static final int HEADER_SIZE = 57;
    /** Bytes before batchLength starts counting: baseOffsetDelta + batchLength. */
    public static final int LOG_OVERHEAD = 8;
    /** Header bytes counted by batchLength: 57 - 8. */
    public static final int BATCH_LENGTH_HEADER_BYTES = HEADER_SIZE - LOG_OVERHEAD;
    /** First byte covered by the CRC. */
    public static final int CRC_START_OFFSET = ATTRIBUTES_OFFSET;
    /** The only supported magic. */
    public static final byte MAGIC = 1;

    /** Record: size of the length field. */
    public static final int RECORD_LENGTH_SIZE = 4;
    /** Record: attributes(1) + timestampDelta(8) + offsetDelta(4) + key len(4) + value len(4) + header count(4). */
    public static final int MIN_RECORD_LENGTH = 25;
    /** Smallest whole record in bytes: 4 + 25. */
    public static final int MIN_RECORD_SIZE = RECORD_LENGTH_SIZE + MIN_RECORD_LENGTH;
    /** Smallest valid batchLength: 49 header bytes plus one minimal record. */
    public static final int MIN_BATCH_LENGTH = BATCH_LENGTH_HEADER_BYTES + MIN_RECORD_SIZE;

    /** Attribute bits 0-2: compression codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd, 5-7 undefined). */
    public static final int COMPRESSION_CODEC_MASK = 0x07;
    /** Attribute bit 3: timestampType (1 = LogAppendTime, not supported in v0). */
    public static final int TIMESTAMP_TYPE_MASK = 0x08;
    /** Attribute bit 4: control batch. */
    public static final int CONTROL_FLAG_MASK = 0x10;
    /** Attribute bit 5: transactional. */
    public static final int TRANSACTIONAL_FLAG_MASK = 0x20;
    /** Attribute bits 6-15: reserved, must be 0. */
    public static final int RESERVED_ATTRIBUTES_MASK = 0xFFC0;

    /** Producer id, epoch and base sequence of a plain (non-idempotent) producer. */
    public static final long NO_PRODUCER_ID = -1L;

    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;

    private RecordBatchLayout() {}

    /** Whole batch size in bytes: 8 + batchLength (absolute get, no index change). */
    public static int batchSize(ByteBuf buf, int batchStart) {
        return LOG_OVERHEAD + batchLength(buf, batchStart);
    }

    public static int baseOffsetDelta(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + BASE_OFFSET_DELTA_OFFSET);
    }

    /**
     * Rewrites bytes 0-3 (not covered by the CRC), as Fetch v0 and storage do ({@code
     * docs/spec/wire-protocol.md} §6.4 step 5).
     */
    public static void setBaseOffsetDelta(ByteBuf buf, int batchStart, int baseOffsetDelta) {
        buf.setInt(batchStart + BASE_OFFSET_DELTA_OFFSET, baseOffsetDelta);
    }

    public static int batchLength(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + BATCH_LENGTH_OFFSET);
    }

    public static int partitionLeaderEpoch(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + PARTITION_LEADER_EPOCH_OFFSET);
    }

    /** Stamps bytes 8-11 (not covered by the CRC), as the leader does at append. */
    public static void setPartitionLeaderEpoch(ByteBuf buf, int batchStart, int epoch) {
        buf.setInt(batchStart + PARTITION_LEADER_EPOCH_OFFSET, epoch);
    }

    /**
     * Stamps producerId, producerEpoch and baseSequence (bytes 39-52) of a complete batch, as an
     * idempotent producer does when it sends the batch the first time, and rewrites the CRC-32C,
     * which covers them. The batch must be complete (batchLength set); compressed or not.
     */
    public static void setProducerFields(
            ByteBuf buf, int batchStart, long producerId, short producerEpoch, int baseSequence) {
        writeProducerFields(buf, batchStart, producerId, producerEpoch, baseSequence);
        buf.setInt(batchStart + CRC_OFFSET, computeCrc(buf, batchStart));
    }

    /**
     * As {@link #setProducerFields(ByteBuf, int, long, short, int)} for a batch whose records' CRC-32C
     * is known ({@link #recordsCrc}, taken when it was sealed): sums only the 40 header bytes 17-56
     * and {@linkplain Crc32c#combine combines} them with {@code recordsCrc}, instead of summing the
     * whole batch again. The result is the same CRC; a wrong {@code recordsCrc} gives a batch every
     * reader refuses (CORRUPT_MESSAGE), never one that passes with other records.
     */
    public static void setProducerFields(
            ByteBuf buf, int batchStart, long producerId, short producerEpoch, int baseSequence, int recordsCrc) {
        writeProducerFields(buf, batchStart, producerId, producerEpoch, baseSequence);
        int headerCrc = Crc32c.compute(buf, batchStart + CRC_START_OFFSET, RECORDS_OFFSET - CRC_START_OFFSET);
        int recordsBytes = LOG_OVERHEAD + batchLength(buf, batchStart) - RECORDS_OFFSET;
        buf.setInt(batchStart + CRC_OFFSET, Crc32c.combine(headerCrc, recordsCrc, recordsBytes));
    }

    /** The producer id, epoch and base sequence fields (bytes 39-52), the CRC left as it was. */
    private static void writeProducerFields(
            ByteBuf buf, int batchStart, long producerId, short producerEpoch, int baseSequence) {
        buf.setLong(batchStart + PRODUCER_ID_OFFSET, producerId);
        buf.setShort(batchStart + PRODUCER_EPOCH_OFFSET, producerEpoch);
        buf.setInt(batchStart + BASE_SEQUENCE_OFFSET, baseSequence);
    }

    /**
     * The CRC-32C of a complete batch's records section (bytes 57..end, batchLength set): the part of
     * the batch CRC that stamping the producer fields does not change.
     */
    public static int recordsCrc(ByteBuf buf, int batchStart) {
        return Crc32c.compute(
                buf, batchStart + RECORDS_OFFSET, LOG_OVERHEAD + batchLength(buf, batchStart) - RECORDS_OFFSET);
    }

    public static byte magic(ByteBuf buf, int batchStart) {
        return buf.getByte(batchStart + MAGIC_OFFSET);
    }

    /** The stored CRC-32C (unsigned value in the bits of an int). */
    public static int crc(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + CRC_OFFSET);
    }

    /** Attributes as an unsigned 16-bit value. */
    public static int attributes(ByteBuf buf, int batchStart) {
        return buf.getUnsignedShort(batchStart + ATTRIBUTES_OFFSET);
    }

    public static int lastOffsetDelta(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + LAST_OFFSET_DELTA_OFFSET);
    }

    public static long baseTimestamp(ByteBuf buf, int batchStart) {
        return buf.getLong(batchStart + BASE_TIMESTAMP_OFFSET);
    }

    public static long maxTimestamp(ByteBuf buf, int batchStart) {
        return buf.getLong(batchStart + MAX_TIMESTAMP_OFFSET);
    }

    public static long producerId(ByteBuf buf, int batchStart) {
        return buf.getLong(batchStart + PRODUCER_ID_OFFSET);
    }

    public static short producerEpoch(ByteBuf buf, int batchStart) {
        return buf.getShort(batchStart + PRODUCER_EPOCH_OFFSET);
    }

    public static int baseSequence(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + BASE_SEQUENCE_OFFSET);
    }

    public static int recordCount(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + RECORD_COUNT_OFFSET);
    }

    /** Number of bytes the CRC covers for a batch of this batchLength: batchLength - 9. */
    public static int crcCoveredBytes(int batchLength) {
        return batchLength - (CRC_START_OFFSET - LOG_OVERHEAD);
    }

    /** Computes the CRC-32C over batch offsets 17..end (does not compare it). */
    public static int computeCrc(ByteBuf buf, int batchStart) {
        return Crc32c.compute(buf, batchStart + CRC_START_OFFSET, crcCoveredBytes(batchLength(buf, batchStart)));
    }
}
