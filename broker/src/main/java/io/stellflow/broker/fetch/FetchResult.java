package io.stellflow.broker.fetch;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.message.FetchResponse;
import java.util.List;

/**
 * One evaluation of a Fetch: the response and the record buffers it references.
 *
 * <p>Buffer ownership: the result owns {@code buffers}; call {@link #release()} exactly once after the
 * response was encoded (or when it is discarded).
 *
 * <p>Thread-safety: confined to the thread that evaluates and answers the Fetch.
 *
 * @param response the Fetch response body
 * @param recordsBytes total records bytes across partitions (compared with minBytes)
 * @param hasError whether any partition carries an error (answered at once, decision 9.e)
 * @param highWatermarks the readable bound seen for each resolved partition, in plan order
 * @param buffers the record buffers to release
 */
public record FetchResult(
        FetchResponse response, long recordsBytes, boolean hasError, long[] highWatermarks, List<ByteBuf> buffers) {

    /** Releases every record buffer. */
    public void release() {
        for (ByteBuf buffer : buffers) {
            buffer.release();
        }
    }
}
