package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import io.stellflow.protocol.record.ControlRecordLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Transactional offsets in the group shard (TxnOffsetCommit, {@code docs/exactly-once.md}
 * "Transactional offset commits"): pending per producer and invisible until the COMMIT marker, dropped
 * by an ABORT, fenced by producer epoch and member epoch, ordered against plain commits and other
 * producers as the log is, and rebuilt by a load (committed applied, aborted dropped, open ones still
 * pending and applied by a later marker). Time comes from the fixture's clock.
 */
class TxnOffsetsShardTest {
    private static final short COMMIT = ControlRecordLayout.COMMIT;
    private static final short ABORT = ControlRecordLayout.ABORT;
    private static final short BEGIN = ControlRecordLayout.BEGIN;

    /** One batch of the coordinator partition's log, as the shard's commands and the markers wrote it. */
    private record Batch(long producerId, short epoch, List<CoordinatorRecord> records, short marker, long sequence) {}

    private ShardFixture f;
    private final List<Batch> log = new ArrayList<>();
    /** Producers with a BEGIN marker in the log and no COMMIT/ABORT after it (as the leader writes BEGIN). */
    private final List<Long> open = new ArrayList<>();

    @BeforeEach
    void setUp() {
        f = new ShardFixture();
        f.topics.put("t", 4);
    }

    private short txnCommit(long producerId, short epoch, long sequence, String group, int partition, long offset) {
        return txnCommit(producerId, epoch, sequence, group, null, -1, partition, offset);
    }

    private short txnCommit(
            long producerId,
            short epoch,
            long sequence,
            String group,
            String memberId,
            int memberEpoch,
            int partition,
            long offset) {
        TxnOffsetCommitRequest req = new TxnOffsetCommitRequest(
                "tx",
                group,
                producerId,
                epoch,
                sequence,
                memberId,
                memberEpoch,
                List.of(new OffsetCommitTopic("t", List.of(new OffsetCommitPartition(partition, offset, "m")))));
        CoordinatorResult<OffsetCommitResponse> r = f.shard.txnCommitOffsets(req, sequence, f.nowMs);
        if (!r.records().isEmpty()) {
            assertThat(r.transaction()).isEqualTo(new CoordinatorResult.Transaction(producerId, epoch, sequence));
            if (!open.contains(producerId)) {
                open.add(producerId);
                log.add(new Batch(producerId, epoch, List.of(), BEGIN, sequence));
            }
            log.add(new Batch(producerId, epoch, r.records(), (short) -1, -1));
        } else {
            assertThat(r.transaction()).isNull();
        }
        return r.response().topics().get(0).partitions().get(0).errorCode();
    }

    private short plainCommit(String group, int partition, long offset) {
        int before = f.log.size();
        short code = f.commitV0(group, "t", partition, offset);
        log.add(new Batch(-1, (short) -1, List.copyOf(f.log.subList(before, f.log.size())), (short) -1, -1));
        return code;
    }

    /** The marker reached the partition: logged, then the shard is told (as the broker does). */
    private int marker(long producerId, short epoch, long sequence, boolean commit) {
        open.remove(producerId);
        log.add(new Batch(producerId, epoch, List.of(), commit ? COMMIT : ABORT, sequence));
        return f.shard.completeTransaction(producerId, epoch, sequence, commit).response();
    }

    /** A fresh shard loading {@link #log} as the coordinator runtime does after a failover. */
    private GroupShard replayed() {
        GroupShard fresh = new GroupShard(f.config, t -> f.topics.getOrDefault(t, -1), () -> "other", () -> {});
        long offset = 0;
        for (Batch b : log) {
            if (b.marker() >= 0) {
                fresh.replayMarker(offset++, b.producerId(), b.epoch(), b.marker(), b.sequence());
                continue;
            }
            for (CoordinatorRecord r : b.records()) {
                if (b.producerId() >= 0) {
                    fresh.replayTransactional(offset++, b.producerId(), b.epoch(), r.key(), r.value());
                } else {
                    fresh.replay(offset++, r.key(), r.value());
                }
            }
        }
        fresh.onLoaded(f.nowMs);
        return fresh;
    }

    private static long fetch(GroupShard shard, String group, int partition) {
        return shard.fetchOffsets(
                        new io.stellflow.protocol.message.OffsetFetchRequest(
                                group,
                                List.of(new io.stellflow.protocol.message.OffsetFetchRequest.OffsetFetchTopic(
                                        "t", List.of(partition)))),
                        (short) 0)
                .topics()
                .get(0)
                .partitions()
                .get(0)
                .offset();
    }

    @Test
    void pendingOffsetsAreInvisibleUntilTheCommitMarkerAppliesThem() {
        assertThat(txnCommit(7, (short) 0, 3, "g", 0, 10)).isEqualTo(Errors.NONE);
        assertThat(txnCommit(7, (short) 0, 3, "g", 1, 20)).isEqualTo(Errors.NONE);
        assertThat(f.fetch("g", "t", 0)).isEqualTo(-1);
        assertThat(f.shard.describeGroup("g").errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(f.shard.listGroups(List.of())).isEmpty();
        assertThat(f.shard.hasPendingTransactionalOffset("g", "t", 0)).isTrue();

        assertThat(marker(7, (short) 0, 3, true)).isEqualTo(2);
        assertThat(f.fetch("g", "t", 0)).isEqualTo(10);
        assertThat(f.fetch("g", "t", 1)).isEqualTo(20);
        assertThat(f.shard.hasPendingTransactionalOffset("g", "t", 0)).isFalse();
        assertThat(f.shard.describeGroup("g").errorCode()).isEqualTo(Errors.NONE);
        // A repeated marker (the coordinator retries) changes nothing.
        assertThat(marker(7, (short) 0, 3, true)).isZero();
    }

    @Test
    void anAbortDropsThePendingOffsetsAndKeepsTheLastCommit() {
        plainCommit("g", 0, 5);
        txnCommit(7, (short) 0, 1, "g", 0, 10);
        assertThat(marker(7, (short) 0, 1, false)).isZero();
        assertThat(f.fetch("g", "t", 0)).isEqualTo(5);
        assertThat(f.shard.hasPendingTransactionalOffset("g", "t", 0)).isFalse();
        // The producer's next transaction commits.
        txnCommit(7, (short) 0, 2, "g", 0, 11);
        marker(7, (short) 0, 2, true);
        assertThat(f.fetch("g", "t", 0)).isEqualTo(11);
    }

    @Test
    void anOlderProducerEpochIsFencedAndANewerOneStartsOver() {
        txnCommit(7, (short) 2, 1, "g", 0, 10);
        assertThat(txnCommit(7, (short) 1, 1, "g", 0, 99)).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        // The newer epoch's transaction replaces the older one's pending offsets (its abort came first).
        assertThat(txnCommit(7, (short) 3, 2, "g", 1, 30)).isEqualTo(Errors.NONE);
        marker(7, (short) 3, 2, true);
        assertThat(f.fetch("g", "t", 0)).isEqualTo(-1);
        assertThat(f.fetch("g", "t", 1)).isEqualTo(30);
    }

    @Test
    void aMarkerOfAnEarlierTransactionLeavesTheOpenOnePending() {
        txnCommit(7, (short) 0, 5, "g", 0, 10);
        assertThat(f.shard.completeTransaction(7, (short) 0, 4, true).response())
                .isZero();
        assertThat(f.fetch("g", "t", 0)).isEqualTo(-1);
        assertThat(f.shard.hasPendingTransactionalOffset("g", "t", 0)).isTrue();
    }

    @Test
    void offsetsWrittenAfterTheirTransactionEndedAreDroppedByTheNextCommit() {
        // Transaction 5's offsets reach the log after its marker (a client that did not wait for the
        // answer before EndTransaction); transaction 6 then commits: 5's offsets must not ride on it.
        txnCommit(7, (short) 0, 5, "g", 0, 10);
        assertThat(marker(7, (short) 0, 6, true)).isZero();
        assertThat(f.fetch("g", "t", 0)).isEqualTo(-1);
        assertThat(f.shard.hasPendingTransactionalOffset("g", "t", 0)).isFalse();
        assertThat(fetch(replayed(), "g", 0)).as("the same after a load").isEqualTo(-1);
    }

    @Test
    void memberAndPartitionChecksAreThoseOfACommit() {
        assertThat(txnCommit(7, (short) 0, 1, "g", "m-1", 3, 0, 10)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(txnCommit(7, (short) 0, 1, "g", 0, -1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(txnCommit(7, (short) 0, 1, "g", 9, 1)).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(txnCommit(7, (short) 0, 1, "", 0, 1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(log).isEmpty(); // nothing written
        // A member of our protocol at its epoch commits the partitions it owns.
        var hb = f.heartbeat("cg", null, 0, null, List.of("t"), List.of());
        String member = hb.memberId();
        int epoch = hb.memberEpoch();
        assertThat(txnCommit(7, (short) 0, 1, "cg", member, epoch - 1, 0, 10)).isEqualTo(Errors.STALE_MEMBER_EPOCH);
        assertThat(txnCommit(7, (short) 0, 1, "cg", member, epoch, 0, 10)).isEqualTo(Errors.NONE);
        // Without member fields no member check: the producer epoch fences (Kafka before KIP-447).
        assertThat(txnCommit(7, (short) 0, 1, "cg", null, OffsetCommitRequest.NO_MEMBER_EPOCH, 1, 11))
                .isEqualTo(Errors.NONE);
        marker(7, (short) 0, 1, true);
        assertThat(f.fetch("cg", "t", 0)).isEqualTo(10);
        assertThat(f.fetch("cg", "t", 1)).isEqualTo(11);
    }

    @Test
    void theLatestRecordOfAPartitionWinsAsCompactionWouldKeepIt() {
        // A plain commit after a transactional one: the plain record is later, the marker keeps it.
        txnCommit(1, (short) 0, 1, "g", 0, 10);
        plainCommit("g", 0, 12);
        marker(1, (short) 0, 1, true);
        assertThat(f.fetch("g", "t", 0)).isEqualTo(12);
        // Two producers: the later record wins whatever the order of their commits.
        txnCommit(1, (short) 0, 2, "g", 1, 100); // older
        txnCommit(2, (short) 0, 1, "g", 1, 200); // newer
        marker(2, (short) 0, 1, true);
        marker(1, (short) 0, 2, true);
        assertThat(f.fetch("g", "t", 1)).isEqualTo(200);
        txnCommit(2, (short) 0, 2, "g", 2, 300); // older
        txnCommit(1, (short) 0, 3, "g", 2, 400); // newer
        marker(2, (short) 0, 2, true);
        assertThat(f.fetch("g", "t", 2)).isEqualTo(300);
        marker(1, (short) 0, 3, true);
        assertThat(f.fetch("g", "t", 2)).isEqualTo(400);
        // A load of the same log comes to the same offsets.
        GroupShard fresh = replayed();
        assertThat(ShardFixture.asMap(fresh.stateRecords())).isEqualTo(ShardFixture.asMap(f.shard.stateRecords()));
        assertThat(fetch(fresh, "g", 0)).isEqualTo(12);
        assertThat(fetch(fresh, "g", 1)).isEqualTo(200);
        assertThat(fetch(fresh, "g", 2)).isEqualTo(400);
    }

    @Test
    void aLoadAppliesCommittedDropsAbortedAndKeepsOpenTransactionsPending() {
        plainCommit("g", 3, 1);
        txnCommit(1, (short) 0, 1, "g", 0, 10); // committed
        txnCommit(2, (short) 4, 7, "g", 1, 20); // aborted
        txnCommit(3, (short) 1, 2, "g", 2, 30); // still open at the failover
        plainCommit("g", 3, 2);
        marker(1, (short) 0, 1, true);
        marker(2, (short) 4, 7, false);

        GroupShard fresh = replayed();
        assertThat(fetch(fresh, "g", 0)).isEqualTo(10);
        assertThat(fetch(fresh, "g", 1)).isEqualTo(-1);
        assertThat(fetch(fresh, "g", 2)).isEqualTo(-1);
        assertThat(fetch(fresh, "g", 3)).isEqualTo(2);
        assertThat(fresh.hasPendingTransactionalOffset("g", "t", 2)).isTrue();
        assertThat(fresh.hasPendingTransactionalOffset("g", "t", 1)).isFalse();
        assertThat(ShardFixture.asMap(fresh.stateRecords())).isEqualTo(ShardFixture.asMap(f.shard.stateRecords()));

        // The open transaction's marker reaches the new coordinator: applied there.
        assertThat(fresh.completeTransaction(3, (short) 1, 2, true).response()).isEqualTo(1);
        assertThat(fetch(fresh, "g", 2)).isEqualTo(30);
        // Its epoch still fences an older instance on the new coordinator before the marker.
        GroupShard again = replayed();
        TxnOffsetCommitRequest stale = new TxnOffsetCommitRequest(
                "tx",
                "g",
                3,
                (short) 0,
                2,
                null,
                -1,
                List.of(new OffsetCommitTopic("t", List.of(new OffsetCommitPartition(2, 1, null)))));
        assertThat(again.txnCommitOffsets(stale, 2, f.nowMs)
                        .response()
                        .topics()
                        .get(0)
                        .partitions()
                        .get(0)
                        .errorCode())
                .isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
    }
}
