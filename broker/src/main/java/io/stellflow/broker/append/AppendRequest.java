package io.stellflow.broker.append;

import io.netty.buffer.ByteBuf;

/**
 * One partition's RecordBatchSet from one Produce request, queued for that partition's append
 * agent.
 *
 * <p>Buffer ownership: {@code records} is a RETAINED slice of the request frame (retained by the
 * producer of this request before it is offered, so the frame stays alive after the request
 * handler returns and releases its own reference). The agent releases it exactly once, after the
 * append (or after answering an error); a removed queue, or {@link AppendService#close}, answers
 * and releases what is left.
 *
 * @param pending the request's response, slot {@code slot} is this partition
 * @param slot this partition's index in the response
 * @param partitionId the partition id (for the response)
 * @param records the retained batch set, not yet validated
 * @param transactional whether the request carried a transactionalId
 */
record AppendRequest(PendingProduce pending, int slot, int partitionId, ByteBuf records, boolean transactional) {}
