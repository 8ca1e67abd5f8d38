package io.stellflow.broker.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Fetch planned while this broker led the partition and read after it became a follower (a parked
 * Fetch answered at its maxWaitMs, or a read racing the role change): its follower HW and LSO are
 * what the new leader last reported, below what this broker answered as leader, and a consumer must
 * never see them go back (docs/replication.md, "Consumers"). The read answers {@code
 * NOT_LEADER_OR_FOLLOWER}, which clients retry at the new leader. The fault checker found this as
 * {@code LSO_DECREASED} (LSO 1527, then 1524 from the deposed leader).
 */
class FetchAfterLeadershipLossTest {
    @TempDir
    Path dir;

    private static void append(Partition p, int records) throws IOException {
        for (int i = 0; i < records; i++) {
            ByteBuf buf = Unpooled.buffer();
            RecordBatchBuilder b = new RecordBatchBuilder(buf, 1000L);
            b.append(1000L, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
            b.close();
            try {
                p.appendAsLeader(buf);
            } finally {
                buf.release();
            }
        }
    }

    private static FetchResponse.PartitionData read(FetchPlan plan) {
        EmbeddedChannel channel = new EmbeddedChannel();
        RequestContext context = new RequestContext(channel, RequestHeader.of(ApiKeys.FETCH, (short) 0, 1, "test"));
        FetchResult result = new FetchReader(false).read(plan, context);
        try {
            ByteBuf head = result.frame().head();
            int bodyStart = head.readerIndex() + 4 + ResponseHeader.SIZE;
            return FetchResponse.read(head.slice(bodyStart, head.writerIndex() - bodyStart))
                    .responses()
                    .get(0)
                    .partitions()
                    .get(0);
        } finally {
            result.release();
            channel.finishAndReleaseAll();
        }
    }

    private static FetchRequest request(long offset, byte isolation) {
        return new FetchRequest(
                -1,
                500,
                1,
                1 << 20,
                isolation,
                0,
                List.of(new FetchRequest.FetchTopic(
                        "t", List.of(new FetchRequest.FetchPartition(0, -1, offset, -1L, 1 << 20)))));
    }

    @ParameterizedTest
    @ValueSource(bytes = {FetchRequest.READ_UNCOMMITTED, FetchRequest.READ_COMMITTED})
    void aFetchPlannedOnTheLeaderAndReadOnAFollowerAnswersNotLeader(byte isolation) throws IOException {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            registry.create("t", 1);
            Partition p = registry.partition("t", 0);
            append(p, 6);
            FetchPlan plan = FetchPlan.resolve(request(6, isolation), registry);
            FetchResponse.PartitionData asLeader = read(plan);
            assertThat(asLeader.errorCode()).isEqualTo(Errors.NONE);
            assertThat(asLeader.highWatermark()).isEqualTo(6);
            assertThat(asLeader.lastStableOffset()).isEqualTo(6);

            p.becomeFollower(2, p.leaderEpoch() + 1);
            p.updateFollowerHighWatermark(4); // the new leader's HW still lags
            FetchResponse.PartitionData afterLoss = read(plan);
            assertThat(afterLoss.errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
            assertThat(afterLoss.highWatermark()).isEqualTo(-1);
            assertThat(afterLoss.lastStableOffset()).isEqualTo(-1);
        }
    }

    /** Leading again at a newer epoch is another leadership: the old plan is refused too. */
    @Test
    void aFetchPlannedAtAnEarlierLeadershipIsRefusedAfterReelection() throws IOException {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            registry.create("t", 1);
            Partition p = registry.partition("t", 0);
            append(p, 3);
            int epoch = p.leaderEpoch();
            FetchPlan plan = FetchPlan.resolve(request(0, FetchRequest.READ_UNCOMMITTED), registry);
            p.becomeFollower(2, epoch + 1);
            p.becomeLeader(epoch + 2, 0L);
            assertThat(read(plan).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
            FetchPlan fresh = FetchPlan.resolve(request(0, FetchRequest.READ_UNCOMMITTED), registry);
            assertThat(read(fresh).errorCode()).isEqualTo(Errors.NONE);
        }
    }
}
