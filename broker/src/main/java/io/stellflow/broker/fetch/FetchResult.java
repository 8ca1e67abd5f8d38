package io.stellflow.broker.fetch;

import io.stellflow.broker.network.FetchResponseFrame;

/**
 * One evaluation of a Fetch: the complete response frame, ready to send, and what decides whether to
 * send it now.
 *
 * <p>Buffer ownership: the result owns {@code frame} until it is passed to
 * {@link io.stellflow.broker.network.RequestContext#sendFetch}; otherwise call {@link #release()}.
 *
 * <p>Thread-safety: confined to the thread that evaluates and answers the Fetch.
 *
 * @param frame the response frame (length placeholder, header, body, file regions)
 * @param recordsBytes total records bytes across partitions (compared with minBytes)
 * @param hasError whether any partition carries an error (answered at once, decision 9.e of {@code
 *     docs/spec/wire-protocol.md})
 * @param readableBounds the readable bound seen for each resolved partition, in plan order
 * @param records records in the returned batches (offset span of each batch; metrics only)
 */
public record FetchResult(
        FetchResponseFrame frame, long recordsBytes, boolean hasError, long[] readableBounds, long records) {

    /** Releases the frame (when it is not sent). */
    public void release() {
        frame.release();
    }
}
