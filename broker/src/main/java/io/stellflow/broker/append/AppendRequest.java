package io.stellflow.broker.append;

import io.netty.buffer.ByteBuf;

/**
 * One partition's RecordBatchSet from one Produce request, or one transaction marker, queued for
 * that partition's append agent (a marker goes through the same queue as the data, so it is
 * appended after every batch queued before it).
 *
 * <p>Buffer ownership: {@code records} is a RETAINED slice of the request frame (retained by the
 * producer of this request before it is offered, so the frame stays alive after the request
 * handler returns and releases its own reference). The agent releases it exactly once, after the
 * append (or after answering an error); a removed queue, or {@link AppendService#close}, answers
 * and releases what is left. A marker's {@code records} is the empty buffer.
 *
 * @param pending the request's response, slot {@code slot} is this partition
 * @param slot this partition's index in the response
 * @param partitionId the partition id (for the response)
 * @param records the retained batch set, not yet validated
 * @param transactional whether the request carried a transactionalId
 * @param txnSequence the transaction's sequence its coordinator gave (&gt;= 0) for a transactional
 *     batch whose partition is registered; -1 otherwise
 * @param marker the COMMIT or ABORT marker to append instead of records, or null
 */
record AppendRequest(
        PendingProduce pending,
        int slot,
        int partitionId,
        ByteBuf records,
        boolean transactional,
        long txnSequence,
        TxnMarker marker) {

    AppendRequest(PendingProduce pending, int slot, int partitionId, ByteBuf records, boolean transactional) {
        this(pending, slot, partitionId, records, transactional, -1, null);
    }

    /** A copy holding {@code other} records (a compression rewrite). */
    AppendRequest withRecords(ByteBuf other) {
        return new AppendRequest(pending, slot, partitionId, other, transactional, txnSequence, marker);
    }
}
