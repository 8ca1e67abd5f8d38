package io.stellflow.protocol.fuzz;

import static io.stellflow.protocol.fuzz.Oracle.check;
import static io.stellflow.protocol.fuzz.Oracle.expectCode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Fuzz target: a RecordBatchSet ({@code docs/spec/wire-protocol.md} §7) through {@link
 * RecordBatchValidator} (Produce and fetched validation) and the views over a validated set: {@link
 * RecordBatchValidator#batchCount}, {@link RecordBatchValidator#totalRecordCount}, {@link
 * RecordBatchReader#decode} and {@link RecordBatchReader#nextOffset}.
 *
 * <p>Input: byte 0 selects the buffer kind ({@link FuzzBuffers#fromInput}); byte 1 holds flags: bit
 * 0 a transactionalId is present, bits 1-2 pick maxBatchBytes (unlimited, 86, 200, 16384), bit 3
 * recomputes the CRC-32C of every well-framed batch before validation (so mutations reach the
 * record-level checks behind the CRC, which a fuzzer cannot forge); the rest is the record set.
 *
 * <p>A finding (crash) is: any exception from the validator, {@code nextOffset} or the counts of a
 * validated set; a code outside NONE, INVALID_RECORD, CORRUPT_MESSAGE, FEATURE_NOT_ENABLED,
 * MESSAGE_TOO_LARGE; a different code or different records for the same bytes in another buffer
 * kind (heap, direct, pooled, composite); changed bytes, indexes or reference counts; a set valid
 * for Produce but not as fetched data; the reader failing on a set the fetched validation accepts,
 * accepting one it refuses, or failing with anything but a ProtocolException INVALID_RECORD,
 * CORRUPT_MESSAGE or FEATURE_NOT_ENABLED; decoded offsets outside their batch or not increasing
 * (not consecutive for a Produce-valid batch); counts that disagree with the decoded records; a
 * Produce-valid batch whose records do not re-encode ({@link RecordBatchBuilder}) to the same bytes.
 */
public final class RecordSetTarget {
    private static final int[] MAX_BATCH_BYTES = {Integer.MAX_VALUE, 86, 200, 16384};

    /** What one buffer gave: validation codes and decoded records (null when the reader threw). */
    record Outcome(short produceCode, short fetchedCode, List<DecodedRecord> records) {}

    private RecordSetTarget() {}

    public static void run(byte[] input) {
        if (input.length < 2) {
            return;
        }
        byte flags = input[1];
        boolean transactional = (flags & 1) != 0;
        int maxBatchBytes = MAX_BATCH_BYTES[(flags >>> 1) & 3];
        byte[] set = Arrays.copyOfRange(input, 2, input.length);
        if ((flags & 8) != 0) {
            fixCrcs(set);
        }
        try (FuzzBuffers bufs = new FuzzBuffers()) {
            FuzzBuffers.Kind kind = FuzzBuffers.kind(input[0]);
            Outcome first = checkSet(bufs.of(kind, set, 0, set.length, input[0] * 4), transactional, maxBatchBytes, 0L);
            FuzzBuffers.Kind other = FuzzBuffers.Kind.values()[(kind.ordinal() + 1) % 4];
            Outcome second = checkSet(bufs.of(other, set, 0, set.length, 500), transactional, maxBatchBytes, 0L);
            check(
                    first.equals(second),
                    "outcome differs between " + kind + " and " + other + ": " + first + " / " + second);
        }
    }

    /**
     * All oracles on one record set (also used on the record sets inside Produce requests and Fetch
     * responses by {@link BodyCodec}); {@code baseOffset} is what baseOffsetDelta counts from.
     */
    static Outcome checkSet(ByteBuf set, boolean transactionalIdPresent, int maxBatchBytes, long baseOffset) {
        int start = set.readerIndex();
        int end = set.writerIndex();
        byte[] before = ByteBufUtil.getBytes(set);
        int refCnt = set.refCnt();

        short code = RecordBatchValidator.validate(set, maxBatchBytes, transactionalIdPresent);
        short unlimited = RecordBatchValidator.validate(set, Integer.MAX_VALUE, transactionalIdPresent);
        short fetched = RecordBatchValidator.validateFetched(set, Integer.MAX_VALUE);
        check(
                code == Errors.NONE
                        || code == Errors.INVALID_RECORD
                        || code == Errors.CORRUPT_MESSAGE
                        || code == Errors.FEATURE_NOT_ENABLED
                        || code == Errors.MESSAGE_TOO_LARGE,
                "undocumented validation code " + Errors.name(code));
        check(
                unlimited == Errors.NONE ? code == Errors.NONE || code == Errors.MESSAGE_TOO_LARGE : code == unlimited,
                "size limit changed the code: " + Errors.name(code) + " vs " + Errors.name(unlimited));
        check(fetched != Errors.MESSAGE_TOO_LARGE, "fetched validation with no limit said MESSAGE_TOO_LARGE");
        check(unlimited != Errors.NONE || fetched == Errors.NONE, "Produce-valid set refused as fetched data");
        if (code == Errors.MESSAGE_TOO_LARGE) {
            check(largestBatch(set) > maxBatchBytes, "MESSAGE_TOO_LARGE with no batch above " + maxBatchBytes);
        }

        long next = RecordBatchReader.nextOffset(set, baseOffset);
        List<DecodedRecord> records = new ArrayList<>();
        boolean decoded;
        try {
            RecordBatchReader.decode(
                    set,
                    baseOffset,
                    (offset, ts, key, value, headers) ->
                            records.add(new DecodedRecord(offset, ts, key, value, headers)));
            decoded = true;
        } catch (ProtocolException e) {
            expectCode(e, Errors.INVALID_RECORD, Errors.CORRUPT_MESSAGE, Errors.FEATURE_NOT_ENABLED);
            decoded = false;
        }
        boolean empty = start == end;
        check(
                decoded == (fetched == Errors.NONE || empty),
                "reader " + (decoded ? "accepted" : "refused") + " a set the fetched validation calls "
                        + Errors.name(fetched));
        if (fetched == Errors.NONE) {
            checkViews(set, baseOffset, next, records, unlimited == Errors.NONE);
        }
        check(Arrays.equals(before, ByteBufUtil.getBytes(set)), "the record set's bytes changed");
        check(set.readerIndex() == start && set.writerIndex() == end, "the record set's indexes changed");
        check(set.refCnt() == refCnt, "the record set's refCnt changed");
        return new Outcome(code, fetched, decoded ? records : null);
    }

    private static void checkViews(
            ByteBuf set, long baseOffset, long next, List<DecodedRecord> records, boolean produceValid) {
        int batches = 0;
        int total = 0;
        int r = 0;
        long lastOffset = -1;
        ByteBuf rebuilt = Unpooled.buffer();
        try {
            for (int pos = set.readerIndex(); pos < set.writerIndex(); pos += RecordBatchLayout.batchSize(set, pos)) {
                batches++;
                int count = RecordBatchLayout.recordCount(set, pos);
                total += count;
                long batchBase = baseOffset + RecordBatchLayout.baseOffsetDelta(set, pos);
                long batchLast = batchBase + RecordBatchLayout.lastOffsetDelta(set, pos);
                lastOffset = batchLast;
                check(r + count <= records.size(), "fewer records decoded than recordCount says");
                long previous = Long.MIN_VALUE;
                for (int i = 0; i < count; i++) {
                    long offset = records.get(r + i).offset();
                    check(offset >= batchBase && offset <= batchLast, "record offset " + offset + " outside its batch");
                    check(offset > previous, "record offsets not increasing in a batch");
                    check(!produceValid || offset == batchBase + i, "Produce-valid batch with an offset gap");
                    previous = offset;
                }
                if (produceValid) {
                    checkReencodes(set, pos, records.subList(r, r + count), batchBase, rebuilt);
                }
                r += count;
            }
        } finally {
            rebuilt.release();
        }
        check(RecordBatchValidator.batchCount(set) == batches, "batchCount disagrees with the batches");
        check(RecordBatchValidator.totalRecordCount(set) == total, "totalRecordCount disagrees with recordCounts");
        check(total == records.size(), "decoded " + records.size() + " records, recordCounts sum to " + total);
        check(next == (batches == 0 ? -1 : lastOffset + 1), "nextOffset " + next + " after last offset " + lastOffset);
    }

    /** A Produce-valid batch's records are exactly what the builder writes for the decoded records. */
    private static void checkReencodes(
            ByteBuf set, int pos, List<DecodedRecord> records, long batchBase, ByteBuf rebuilt) {
        rebuilt.clear();
        long baseTimestamp = RecordBatchLayout.baseTimestamp(set, pos);
        RecordBatchBuilder builder = new RecordBatchBuilder(rebuilt, baseTimestamp);
        for (DecodedRecord d : records) {
            builder.append(d.timestampMs(), d.key(), d.value(), d.headers());
        }
        builder.close();
        int size = RecordBatchLayout.batchSize(set, pos);
        check(
                rebuilt.readableBytes() == size
                        && ByteBufUtil.equals(
                                rebuilt,
                                RecordBatchLayout.RECORDS_OFFSET,
                                set,
                                pos + RecordBatchLayout.RECORDS_OFFSET,
                                size - RecordBatchLayout.RECORDS_OFFSET),
                "records of the batch at offset " + batchBase + " do not re-encode to the same bytes");
    }

    private static int largestBatch(ByteBuf set) {
        int largest = 0;
        for (int pos = set.readerIndex(); pos < set.writerIndex(); pos += RecordBatchLayout.batchSize(set, pos)) {
            largest = Math.max(largest, RecordBatchLayout.batchSize(set, pos));
        }
        return largest;
    }

    /** Rewrites the CRC-32C of every well-framed batch of {@code set} in place. */
    static void fixCrcs(byte[] set) {
        CRC32C crc = new CRC32C();
        int pos = 0;
        while (set.length - pos >= RecordBatchLayout.RECORDS_OFFSET) {
            int batchLength = getInt(set, pos + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH
                    || batchLength > set.length - pos - RecordBatchLayout.LOG_OVERHEAD) {
                return;
            }
            crc.reset();
            crc.update(
                    set,
                    pos + RecordBatchLayout.CRC_START_OFFSET,
                    RecordBatchLayout.LOG_OVERHEAD + batchLength - RecordBatchLayout.CRC_START_OFFSET);
            putInt(set, pos + RecordBatchLayout.CRC_OFFSET, (int) crc.getValue());
            pos += RecordBatchLayout.LOG_OVERHEAD + batchLength;
        }
    }

    private static int getInt(byte[] b, int at) {
        return (b[at] & 0xFF) << 24 | (b[at + 1] & 0xFF) << 16 | (b[at + 2] & 0xFF) << 8 | (b[at + 3] & 0xFF);
    }

    private static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }
}
