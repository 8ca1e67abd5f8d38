package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponseV1;

/**
 * A partition's Fetch answer with the envelope decoded; {@code records} (null when empty) is a
 * retained slice of the response frame, owned by whoever holds this object.
 *
 * <p>Thread-safety: built on the I/O thread, then owned by the consumer's application thread.
 *
 * @param baseOffset what the batches' baseOffsetDelta counts from (v0: the fetch offset; v1:
 *     recordsBaseOffset)
 */
record FetchResult(short errorCode, long highWatermark, long baseOffset, ByteBuf records) {
    static FetchResult retaining(short errorCode, long highWatermark, long baseOffset, ByteBuf records) {
        boolean any = errorCode == Errors.NONE && records != null && records.isReadable();
        return new FetchResult(errorCode, highWatermark, baseOffset, any ? records.retain() : null);
    }

    /** I/O thread: the v0 envelope; the records stay undecoded (retained). */
    static FetchResult readV0(ByteBuf body, long fetchOffset) {
        FetchResponse.PartitionData p =
                FetchResponse.read(body).responses().get(0).partitions().get(0);
        return FetchResult.retaining(p.errorCode(), p.highWatermark(), fetchOffset, p.records());
    }

    /** I/O thread: the v1 envelope (stored batches; offsets count from recordsBaseOffset). */
    static FetchResult readV1(ByteBuf body) {
        FetchResponseV1.PartitionData p =
                FetchResponseV1.read(body).responses().get(0).partitions().get(0);
        return FetchResult.retaining(p.errorCode(), p.highWatermark(), p.recordsBaseOffset(), p.records());
    }
}
