package io.stellflow.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ListOffsetsRequest.ListOffsetsPartition;
import io.stellflow.protocol.message.ListOffsetsResponse.ListOffsetsPartitionResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.LogConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ListOffsets latest: the HW at isolationLevel 0, the LSO at 1 (spec §6.5, decision 9.k). */
class ListOffsetsIsolationTest {
    @TempDir
    Path dir;

    @Test
    void latestIsTheLastStableOffsetAtReadCommitted() throws Exception {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            registry.create("t", 1);
            Partition p = registry.partition("t", 0);
            ByteBuf out = Unpooled.buffer();
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1000);
            b.append(1000, null, "v".getBytes(StandardCharsets.UTF_8));
            b.close();
            RecordBatchLayout.setProducerFields(out, 0, 3, (short) 0, 0);
            assertThat(p.appendTransactionalAsLeader(out, null, 0)).isEqualTo(1); // BEGIN at 0
            out.release();
            ListOffsetsPartition latest = new ListOffsetsPartition(0, -1, -1L, 1);
            ListOffsetsPartitionResponse uncommitted = ListOffsetsHandler.listOffsets(p, latest, false);
            ListOffsetsPartitionResponse committed = ListOffsetsHandler.listOffsets(p, latest, true);
            assertThat(uncommitted.offset()).isEqualTo(2);
            assertThat(committed.offset()).isZero();
            assertThat(committed.offsets()).isEqualTo(List.of(0L));
            p.appendTransactionMarker(3, (short) 0, true, 0, 0);
            assertThat(ListOffsetsHandler.listOffsets(p, latest, true).offset()).isEqualTo(3);
        }
    }

    /**
     * A ListOffsets that resolved its partition while this broker led it and reads after it became a
     * follower: the follower's HW (what its new leader last reported, which lags the old leader's)
     * must not be answered as the partition's end; the client retries at the new leader.
     */
    @Test
    void aDeposedLeaderAnswersNotLeaderInsteadOfItsLowerFollowerHighWatermark() throws Exception {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            registry.create("t", 1);
            Partition p = registry.partition("t", 0);
            for (int i = 0; i < 5; i++) {
                ByteBuf out = Unpooled.buffer();
                RecordBatchBuilder b = new RecordBatchBuilder(out, 1000);
                b.append(1000, null, "v".getBytes(StandardCharsets.UTF_8));
                b.close();
                p.appendAsLeader(out);
                out.release();
            }
            ListOffsetsPartition latest = new ListOffsetsPartition(0, -1, -1L, 1);
            assertThat(ListOffsetsHandler.listOffsets(p, latest, true).offset()).isEqualTo(5);
            p.becomeFollower(2, p.leaderEpoch() + 1);
            p.updateFollowerHighWatermark(3);
            assertThat(p.highWatermark()).isEqualTo(3);
            for (boolean readCommitted : new boolean[] {false, true}) {
                ListOffsetsPartitionResponse r = ListOffsetsHandler.listOffsets(p, latest, readCommitted);
                assertThat(r.errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
                assertThat(r.offsets()).isEmpty();
            }
        }
    }
}
