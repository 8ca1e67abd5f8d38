package io.stellflow.broker;

import io.stellflow.broker.append.TxnMarker;
import io.stellflow.broker.coordinator.CoordinatorRuntime;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.broker.group.GroupShard;
import io.stellflow.broker.transaction.LeaderMarkers;
import io.stellflow.broker.transaction.TransactionPartition;

/**
 * Hands each transaction marker written and replicated in a {@code __consumer_offsets} partition led
 * here to that partition's {@link GroupShard} ({@link GroupShard#completeTransaction}, on its runtime
 * thread): the producer's pending transactional offsets are applied (COMMIT) or dropped (ABORT). The
 * command is queued before the marker write is answered, so the coordinator's COMPLETE record, and
 * so the client's EndTransaction answer, come after it: an OffsetFetch sent after a committed
 * EndTransaction sees the offsets. A shard dropped or reloaded meanwhile needs no call: its load
 * read the marker from the log (the command then fails with NOT_COORDINATOR or changes nothing).
 *
 * <p>Lives in the wiring package: {@code group} must not depend on {@code transaction} (which
 * depends on {@code config}, which depends on {@code group}; {@code LayeringTest}).
 *
 * <p>Thread-safety: any thread (the runtime's queue).
 */
final class TxnOffsetMarkers implements LeaderMarkers.MarkerListener {
    private final CoordinatorRuntime<GroupShard> runtime;

    /** @param runtime the group coordinator's runtime */
    TxnOffsetMarkers(CoordinatorRuntime<GroupShard> runtime) {
        this.runtime = runtime;
    }

    @Override
    public void written(TransactionPartition partition, TxnMarker marker) {
        if (!partition.topic().equals(OffsetsTopic.NAME)) {
            return;
        }
        runtime.submit(
                partition.partition(),
                s -> s.completeTransaction(
                        marker.producerId(), marker.producerEpoch(), marker.transactionSequence(), marker.commit()));
    }
}
