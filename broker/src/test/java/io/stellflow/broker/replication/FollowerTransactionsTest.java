package io.stellflow.broker.replication;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.UnifiedLog;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower rebuilds the leader's open transactions, last stable offset and aborted transactions
 * from the replicated markers alone (the batches carry no transactional bit, as the Go SDK's).
 */
class FollowerTransactionsTest {
    @TempDir
    Path dir;

    private static void txn(Partition leader, long pid, int seq, String value) throws Exception {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
            b.append(1_000, null, value.getBytes(UTF_8));
            b.close();
            RecordBatchLayout.setProducerFields(out, 0, pid, (short) 0, seq);
            assertThat(leader.appendTransactionalAsLeader(out, null, 1)).isNotNegative();
        } finally {
            out.release();
        }
    }

    private static void replicate(UnifiedLog l, Partition follower, long leaderHw) throws Exception {
        long from = follower.log().logEndOffset();
        ByteBuf records = ReplicaLogs.read(l, from);
        try {
            assertThat(FollowerAppend.apply(follower, records, from, leaderHw)).isEqualTo(FollowerAppend.APPLIED);
        } finally {
            records.release();
        }
    }

    @Test
    void theFollowerHasTheLeadersLastStableOffsetAndAbortsAfterEachFetch() throws Exception {
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            Partition leader = ReplicaLogs.leader(l, 1);
            Partition follower = ReplicaLogs.follower(f, 1);
            txn(leader, 1, 0, "a"); // BEGIN 0, 1
            txn(leader, 2, 0, "x"); // BEGIN 2, 3
            replicate(l, follower, l.logEndOffset());
            assertThat(f.firstUnstableOffset())
                    .isEqualTo(l.firstUnstableOffset())
                    .isZero();
            assertThat(follower.lastStableOffset()).isZero();

            leader.appendTransactionMarker(1, (short) 0, false, 0, 1); // ABORT 4
            txn(leader, 2, 1, "y"); // 5
            replicate(l, follower, l.logEndOffset());
            assertThat(f.firstUnstableOffset())
                    .isEqualTo(l.firstUnstableOffset())
                    .isEqualTo(2);
            assertThat(follower.lastStableOffset()).isEqualTo(2);
            assertThat(f.abortedTransactions(0, Long.MAX_VALUE))
                    .isEqualTo(l.abortedTransactions(0, Long.MAX_VALUE))
                    .hasSize(1);

            leader.appendTransactionMarker(2, (short) 0, true, 0, 1); // COMMIT 6
            replicate(l, follower, l.logEndOffset());
            assertThat(follower.lastStableOffset()).isEqualTo(7);
            ReplicaLogs.assertSameBytes(f, l);
        }
        // The follower's state survives its own restart the same way.
        try (UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            assertThat(f.abortedTransactions(0, Long.MAX_VALUE)).hasSize(1);
            assertThat(f.firstUnstableOffset()).isEqualTo(Long.MAX_VALUE);
        }
    }
}
