package io.stellflow.broker.transaction;

import io.stellflow.broker.config.TransactionCoordinatorConfig;
import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.broker.transaction.TransactionStateMachine.InitResult;
import io.stellflow.broker.transaction.TransactionStateMachine.TxnResult;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link TransactionStateMachine} under test with an explicit clock ({@link #nowMs}), a producer id
 * source, and the log of every record it produced (so a test can load it into a fresh machine, as a
 * new coordinator would after a failover).
 */
final class TxnFixture {
    static final int COORDINATOR_EPOCH = 7;

    final TransactionCoordinatorConfig config;
    final TransactionStateMachine machine;
    final List<CoordinatorRecord> log = new ArrayList<>();
    long nowMs = 1_000_000;
    long nextProducerId = 1000;

    TxnFixture(TransactionCoordinatorConfig config) {
        this.config = config;
        this.machine = new TransactionStateMachine(config, COORDINATOR_EPOCH);
        machine.onLoaded(nowMs);
    }

    TxnFixture() {
        this(TransactionCoordinatorConfig.DEFAULTS);
    }

    <T> T run(CoordinatorResult<T> r) {
        log.addAll(r.records());
        return r.response();
    }

    InitResult init(String id) {
        return run(machine.initProducerId(id, nextProducerId++, nowMs));
    }

    TxnResult begin(String id, InitResult p) {
        return run(machine.beginTransaction(id, p.producerId(), p.producerEpoch(), nowMs));
    }

    TxnResult end(String id, InitResult p, boolean commit) {
        return run(machine.endTransaction(id, p.producerId(), p.producerEpoch(), commit, nowMs));
    }

    TxnResult register(String id, InitResult p, long sequence, String topic, int partition) {
        return run(machine.registerPartition(
                id, p.producerId(), p.producerEpoch(), sequence, new TransactionPartition(topic, partition), nowMs));
    }

    /** What the coordinator does once the marker writer succeeded. */
    TxnResult markersWritten(TransactionMarkerRequest m) {
        return run(machine.completeTransaction(m.transactionalId(), m.producerId(), m.transactionSequence(), nowMs));
    }

    List<CoordinatorRecord> poll() {
        CoordinatorResult<Void> r = machine.poll(nowMs);
        log.addAll(r.records());
        return r.records();
    }

    /** A fresh machine that loads {@link #log}, as the next leader of the partition would. */
    TransactionStateMachine replayed(int coordinatorEpoch, long loadNowMs) {
        TransactionStateMachine fresh = new TransactionStateMachine(config, coordinatorEpoch);
        long offset = 0;
        for (CoordinatorRecord r : log) {
            fresh.replay(offset++, r.key(), r.value());
        }
        fresh.onLoaded(loadNowMs);
        return fresh;
    }
}
