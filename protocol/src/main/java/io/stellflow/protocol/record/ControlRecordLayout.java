package io.stellflow.protocol.record;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Byte layout of a control batch: the transaction markers the broker writes into a partition's log
 * ({@code docs/exactly-once.md}, "Markers"). A control batch is a magic-1 RecordBatch ({@link
 * RecordBatchLayout}) with attributes {@link RecordBatchLayout#CONTROL_FLAG_MASK} (bit 4) and
 * {@link RecordBatchLayout#TRANSACTIONAL_FLAG_MASK} (bit 5) set ({@code docs/spec/wire-protocol.md}
 * §7.5 numbers the bits this way; Kafka swaps them), the transaction's producer id and epoch,
 * baseSequence -1 and exactly one record, uncompressed, without headers:
 *
 * <pre>
 *  batch offset  field                     value
 *   0..56        batch header              attributes 0x0030, lastOffsetDelta 0, recordCount 1,
 *                                          producerId/epoch of the transaction, baseSequence -1
 *  record:
 *   57  int32    length                    43
 *   61  int8     attributes                0
 *   62  int64    timestampDelta            0
 *   70  int32    offsetDelta               0
 *   74  int32    keyLength                 4
 *   78  int16    key.version               0
 *   80  int16    key.type                  ABORT 0, COMMIT 1 (Kafka's values), BEGIN 2 (ours)
 *   82  int32    valueLength               14
 *   86  int16    value.version             0
 *   88  int32    value.coordinatorEpoch    the coordinator's epoch (-1 in a BEGIN)
 *   92  int64    value.transactionSequence the transaction's sequence (ours: fences late requests
 *                                          of an earlier transaction, issue #20)
 *  100  int32    headerCount               0
 *  104           end: the batch is 104 bytes, batchLength 96, CRC-32C over bytes 17..103
 * </pre>
 *
 * <p>Kafka's marker value is version + coordinatorEpoch (6 bytes); ours adds the int64
 * transactionSequence, so the value is 14 bytes. A BEGIN marker is our addition: the leader writes
 * one before the first batch of a producer's transaction in the partition, because the Go SDK never
 * sets the isTransactional bit (spec §6.13) and followers and recovery must still know where each
 * transaction starts.
 *
 * <p>Worked example: COMMIT of producer 7 epoch 2, coordinatorEpoch 5, transactionSequence 9, at
 * timestamp 1746768000000: bytes 17..18 {@code 00 30}, 39..46 {@code 00 00 00 00 00 00 00 07},
 * 47..48 {@code 00 02}, 49..52 {@code ff ff ff ff}, 78..81 {@code 00 00 00 01}, 86..99 {@code 00 00
 * 00 00 00 05 00 00 00 00 00 00 00 09} (golden bytes in {@code ControlRecordLayoutTest}).
 *
 * <p>Producers never send control batches: {@link RecordBatchValidator} refuses bit 4 with {@code
 * INVALID_RECORD} (spec §7.5). Thread-safety: stateless.
 */
public final class ControlRecordLayout {
    /** Control type of an abort marker (Kafka's value). */
    public static final short ABORT = 0;
    /** Control type of a commit marker (Kafka's value). */
    public static final short COMMIT = 1;
    /** Control type of a begin marker (ours: the first batch of a transaction follows). */
    public static final short BEGIN = 2;

    public static final int RECORD_OFFSET = RecordBatchLayout.RECORDS_OFFSET;
    public static final int KEY_LENGTH_OFFSET = 74;
    public static final int KEY_VERSION_OFFSET = 78;
    public static final int KEY_TYPE_OFFSET = 80;
    public static final int VALUE_LENGTH_OFFSET = 82;
    public static final int VALUE_VERSION_OFFSET = 86;
    public static final int COORDINATOR_EPOCH_OFFSET = 88;
    public static final int TRANSACTION_SEQUENCE_OFFSET = 92;
    public static final int HEADER_COUNT_OFFSET = 100;
    /** Bytes of a whole control batch. */
    public static final int BATCH_SIZE = 104;

    public static final int KEY_BYTES = 4;
    public static final int VALUE_BYTES = 14;
    /** Record length field: attributes through headerCount. */
    public static final int RECORD_LENGTH = BATCH_SIZE - RECORD_OFFSET - RecordBatchLayout.RECORD_LENGTH_SIZE;
    /** Attributes of a control batch: control and transactional bits. */
    public static final int ATTRIBUTES =
            RecordBatchLayout.CONTROL_FLAG_MASK | RecordBatchLayout.TRANSACTIONAL_FLAG_MASK;

    private ControlRecordLayout() {}

    /** Whether the batch at {@code batchStart} has the control bit (bit 4) set. */
    public static boolean isControl(ByteBuf buf, int batchStart) {
        return (RecordBatchLayout.attributes(buf, batchStart) & RecordBatchLayout.CONTROL_FLAG_MASK) != 0;
    }

    /** Whether {@code attributes} (a batch's) has the control bit set. */
    public static boolean isControl(int attributes) {
        return (attributes & RecordBatchLayout.CONTROL_FLAG_MASK) != 0;
    }

    /**
     * Writes one control batch at {@code out}'s writerIndex (advancing it by {@value #BATCH_SIZE}):
     * baseOffsetDelta 0, partitionLeaderEpoch -1 (the append stamps both), CRC computed.
     *
     * @param type {@link #ABORT}, {@link #COMMIT} or {@link #BEGIN}
     * @throws IllegalArgumentException an unknown type or a negative producer id
     */
    public static void write(
            ByteBuf out,
            short type,
            long producerId,
            short producerEpoch,
            int coordinatorEpoch,
            long transactionSequence,
            long timestampMs) {
        if (type < ABORT || type > BEGIN || producerId < 0) {
            throw new IllegalArgumentException("control type " + type + ", producer id " + producerId);
        }
        int start = out.writerIndex();
        out.ensureWritable(BATCH_SIZE);
        out.writeInt(0); // baseOffsetDelta
        out.writeInt(BATCH_SIZE - RecordBatchLayout.LOG_OVERHEAD);
        out.writeInt(-1); // partitionLeaderEpoch, stamped at append
        out.writeByte(RecordBatchLayout.MAGIC);
        out.writeInt(0); // crc, below
        out.writeShort(ATTRIBUTES);
        out.writeInt(0); // lastOffsetDelta
        out.writeLong(timestampMs);
        out.writeLong(timestampMs);
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        out.writeInt(RecordBatchLayout.NO_SEQUENCE);
        out.writeInt(1); // recordCount
        out.writeInt(RECORD_LENGTH);
        out.writeByte(0); // record attributes
        out.writeLong(0); // timestampDelta
        out.writeInt(0); // offsetDelta
        out.writeInt(KEY_BYTES);
        out.writeShort(0); // key version
        out.writeShort(type);
        out.writeInt(VALUE_BYTES);
        out.writeShort(0); // value version
        out.writeInt(coordinatorEpoch);
        out.writeLong(transactionSequence);
        out.writeInt(0); // headerCount
        out.setInt(start + RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, start));
    }

    /**
     * A new buffer from {@code alloc} holding one control batch ({@link #write}); the caller owns
     * and releases it.
     */
    public static ByteBuf build(
            ByteBufAllocator alloc,
            short type,
            long producerId,
            short producerEpoch,
            int coordinatorEpoch,
            long transactionSequence,
            long timestampMs) {
        ByteBuf out = alloc.buffer(BATCH_SIZE, BATCH_SIZE);
        try {
            write(out, type, producerId, producerEpoch, coordinatorEpoch, transactionSequence, timestampMs);
            return out;
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
    }

    /** The control type ({@link #ABORT}, {@link #COMMIT}, {@link #BEGIN}) of a valid control batch. */
    public static short type(ByteBuf buf, int batchStart) {
        return buf.getShort(batchStart + KEY_TYPE_OFFSET);
    }

    public static int coordinatorEpoch(ByteBuf buf, int batchStart) {
        return buf.getInt(batchStart + COORDINATOR_EPOCH_OFFSET);
    }

    public static long transactionSequence(ByteBuf buf, int batchStart) {
        return buf.getLong(batchStart + TRANSACTION_SEQUENCE_OFFSET);
    }

    /**
     * Why the control batch at {@code batchStart} (of {@code size} readable bytes from there) is
     * not one of ours, or null when it is: the size, record count, lengths, versions and type are
     * checked (not the CRC, which the log's readers check).
     */
    public static String invalidReason(ByteBuf buf, int batchStart, int size) {
        if (size < BATCH_SIZE || RecordBatchLayout.batchSize(buf, batchStart) != BATCH_SIZE) {
            return "control batch of " + Math.min(size, RecordBatchLayout.batchSize(buf, batchStart)) + " bytes, not "
                    + BATCH_SIZE;
        }
        if (!isControl(buf, batchStart) || RecordBatchLayout.recordCount(buf, batchStart) != 1) {
            return "not a one-record control batch";
        }
        if ((RecordBatchLayout.attributes(buf, batchStart) & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
            return "compressed control batch";
        }
        if (buf.getInt(batchStart + RECORD_OFFSET) != RECORD_LENGTH
                || buf.getInt(batchStart + KEY_LENGTH_OFFSET) != KEY_BYTES
                || buf.getInt(batchStart + VALUE_LENGTH_OFFSET) != VALUE_BYTES) {
            return "control record lengths";
        }
        if (buf.getShort(batchStart + KEY_VERSION_OFFSET) != 0
                || buf.getShort(batchStart + VALUE_VERSION_OFFSET) != 0) {
            return "control record version";
        }
        short type = type(buf, batchStart);
        if (type < ABORT || type > BEGIN) {
            return "control type " + type;
        }
        return null;
    }
}
