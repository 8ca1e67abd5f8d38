package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponse.AbortedTransaction;
import io.stellflow.protocol.message.FetchResponseV1;
import java.util.List;

/**
 * A partition's Fetch answer with the envelope decoded; {@code records} (null when empty) is a
 * retained slice of the response frame, owned by whoever holds this object.
 *
 * <p>Thread-safety: built on the I/O thread, then owned by the consumer's application thread.
 *
 * @param lastStableOffset the partition's LSO (the HW when no transaction is open); -1 if unknown
 * @param aborted the aborted transactions listed for the returned offsets (read_committed only;
 *     else empty)
 * @param baseOffset what the batches' baseOffsetDelta counts from (v0: the fetch offset; v1:
 *     recordsBaseOffset)
 */
record FetchResult(
        short errorCode,
        long highWatermark,
        long lastStableOffset,
        List<AbortedTransaction> aborted,
        long baseOffset,
        ByteBuf records) {
    static FetchResult retaining(
            short errorCode,
            long highWatermark,
            long lastStableOffset,
            List<AbortedTransaction> aborted,
            long baseOffset,
            ByteBuf records) {
        boolean any = errorCode == Errors.NONE && records != null && records.isReadable();
        return new FetchResult(
                errorCode, highWatermark, lastStableOffset, aborted, baseOffset, any ? records.retain() : null);
    }

    /** This answer without its record bytes (the caller releases them). */
    FetchResult withoutRecords() {
        return new FetchResult(errorCode, highWatermark, lastStableOffset, aborted, baseOffset, null);
    }

    /** I/O thread: the v0 envelope; the records stay undecoded (retained). */
    static FetchResult readV0(ByteBuf body, long fetchOffset) {
        FetchResponse.PartitionData p =
                FetchResponse.read(body).responses().get(0).partitions().get(0);
        return FetchResult.retaining(
                p.errorCode(),
                p.highWatermark(),
                p.lastStableOffset(),
                p.abortedTransactions(),
                fetchOffset,
                p.records());
    }

    /** I/O thread: the v1 envelope (stored batches; offsets count from recordsBaseOffset). */
    static FetchResult readV1(ByteBuf body) {
        FetchResponseV1.PartitionData p =
                FetchResponseV1.read(body).responses().get(0).partitions().get(0);
        return FetchResult.retaining(
                p.errorCode(),
                p.highWatermark(),
                p.lastStableOffset(),
                p.abortedTransactions(),
                p.recordsBaseOffset(),
                p.records());
    }
}
