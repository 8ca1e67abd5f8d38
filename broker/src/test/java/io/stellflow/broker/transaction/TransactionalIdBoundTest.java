package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.config.TransactionCoordinatorConfig;
import io.stellflow.broker.transaction.TransactionStateMachine.InitResult;
import io.stellflow.protocol.Errors;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code transactional.id.max.per.broker} (issue #20), with the fixture's injected clock. */
class TransactionalIdBoundTest {
    private static final TransactionCoordinatorConfig TWO =
            TransactionCoordinatorConfig.DEFAULTS.withMaxTransactionalIds(2);

    private static final InitResult FULL = new InitResult(Errors.COORDINATOR_NOT_AVAILABLE, -1, (short) -1, null);

    @Test
    void aNewIdBeyondTheBoundIsRefusedWritingNothingWhileKnownIdsGoOnAndExpiryFreesRoom() {
        TxnFixture f = new TxnFixture(TWO);
        InitResult a = f.init("a");
        assertThat(a.errorCode()).isEqualTo(Errors.NONE);
        f.nowMs += 1_000;
        assertThat(f.init("b").errorCode()).isEqualTo(Errors.NONE);
        int logged = f.log.size();

        assertThat(f.init("c")).isEqualTo(FULL);
        assertThat(f.log).as("nothing written").hasSize(logged);
        assertThat(f.machine.describe("c")).isNull();
        assertThat(f.machine.entryCount()).isEqualTo(2);

        // Known ids go on: a new epoch, a transaction.
        f.nowMs += 1_000;
        InitResult a1 = f.init("a");
        assertThat(a1.producerEpoch()).isEqualTo((short) 1);
        assertThat(f.begin("a", a1).errorCode()).isEqualTo(Errors.NONE);
        assertThat(f.end("a", a1, true).state()).isEqualTo(TransactionState.COMPLETE_COMMIT);

        // "b" (last changed 1 s in) expires first; "a" changed since. The poll's tombstone frees room.
        f.nowMs += TWO.idExpirationMs() - 1_000;
        assertThat(f.init("c")).as("expired but not yet removed").isEqualTo(FULL);
        List<?> tombstones = f.poll();
        assertThat(tombstones).hasSize(1);
        assertThat(f.machine.describe("b")).isNull();
        assertThat(f.init("c").errorCode()).isEqualTo(Errors.NONE);
        assertThat(f.init("d")).isEqualTo(FULL);
    }

    @Test
    void theBoundCountsTheIdsOfEveryPartitionLoadedOnTheBroker() {
        TransactionStateMachine[] shards = new TransactionStateMachine[2];
        java.util.function.LongSupplier broker = () -> shards[0].entryCount() + shards[1].entryCount();
        shards[0] = new TransactionStateMachine(TWO, 1, broker);
        shards[1] = new TransactionStateMachine(TWO, 1, broker);
        assertThat(shards[0].initProducerId("a", 10, 0).response().errorCode()).isEqualTo(Errors.NONE);
        assertThat(shards[1].initProducerId("b", 11, 0).response().errorCode()).isEqualTo(Errors.NONE);
        assertThat(shards[0].initProducerId("c", 12, 0).response()).isEqualTo(FULL);
        assertThat(shards[1].initProducerId("d", 13, 0).response()).isEqualTo(FULL);
        assertThat(shards[1].initProducerId("b", 14, 0).response().producerEpoch())
                .isEqualTo((short) 1);
    }

    @Test
    void aReplayNeverRefusesAndKeepsTheCountRightAfterAFailoverOrALoweredBound() {
        TxnFixture f = new TxnFixture(TransactionCoordinatorConfig.DEFAULTS.withMaxTransactionalIds(3));
        InitResult a = f.init("a");
        f.init("b");
        f.init("c");
        f.begin("a", a);
        f.log.add(TransactionRecords.tombstone("c"));

        // The next leader with the same bound: "c" is gone, so one new id fits.
        TransactionStateMachine same = f.replayed(8, f.nowMs);
        assertThat(same.entryCount()).isEqualTo(2);
        assertThat(same.initProducerId("d", 50, f.nowMs).response().errorCode()).isEqualTo(Errors.NONE);
        assertThat(same.initProducerId("e", 51, f.nowMs).response()).isEqualTo(FULL);

        // A broker restarted with a lower bound loads every id (a replica must hold what the log
        // holds), refuses new ones and serves the known ones.
        TransactionStateMachine lowered =
                new TransactionStateMachine(TransactionCoordinatorConfig.DEFAULTS.withMaxTransactionalIds(1), 9);
        long offset = 0;
        for (var r : f.log) {
            lowered.replay(offset++, r.key(), r.value());
        }
        lowered.onLoaded(f.nowMs);
        assertThat(lowered.entryCount()).isEqualTo(2);
        assertThat(lowered.describe("a").state()).isEqualTo(TransactionState.ONGOING);
        assertThat(lowered.initProducerId("d", 60, f.nowMs).response()).isEqualTo(FULL);
        assertThat(lowered.initProducerId("b", 61, f.nowMs).response().errorCode())
                .isEqualTo(Errors.NONE);
    }
}
