package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultChannelId;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the broker gauges read: open connections and each hosted partition's log. */
class BrokerGaugesTest {
    @TempDir
    Path dir;

    @Test
    void connectionsCountTheOpenChannelsOfTheGroup() {
        ChannelGroup group = new DefaultChannelGroup("test", GlobalEventExecutor.INSTANCE);
        BrokerGauges gauges = new BrokerGauges(group, visit -> {});
        // Distinct ids: a group holds one channel per id, and every EmbeddedChannel has the same default one.
        EmbeddedChannel a = new EmbeddedChannel(DefaultChannelId.newInstance());
        EmbeddedChannel b = new EmbeddedChannel(DefaultChannelId.newInstance());
        group.add(a);
        group.add(b);
        assertThat(gauges.connections()).isEqualTo(2);
        // No ConnectionHandler in these pipelines and nothing unflushed: no queued work.
        assertThat(gauges.queuedRequests()).isZero();
        assertThat(gauges.queuedResponses()).isZero();

        a.close().syncUninterruptibly(); // a closed channel leaves the group
        assertThat(gauges.connections()).isEqualTo(1);
        b.finishAndReleaseAll();
        assertThat(gauges.connections()).isZero();
    }

    @Test
    void everyHostedPartitionIsVisitedWithItsOffsetsAndActiveSegmentSize() throws Exception {
        try (LocalPartitions partitions =
                LocalPartitions.open(dir, new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE))) {
            partitions.create("t", 2);
            Partition p1 = partitions.partition("t", 1);
            ByteBuf out = Unpooled.buffer();
            RecordBatchBuilder builder = new RecordBatchBuilder(out, 1L);
            builder.append(1L, null, "a".getBytes(StandardCharsets.UTF_8));
            builder.append(2L, null, "b".getBytes(StandardCharsets.UTF_8));
            builder.close();
            p1.appendAsLeader(out);
            BrokerGauges gauges =
                    new BrokerGauges(new DefaultChannelGroup("test", GlobalEventExecutor.INSTANCE), visit -> {
                        visit.accept(partitions.partition("t", 0));
                        visit.accept(p1);
                    });

            List<String> seen = new ArrayList<>();
            gauges.forEachPartition((topic, partition, start, end, activeBytes) ->
                    seen.add(topic + "-" + partition + " " + start + ".." + end + " " + activeBytes));

            assertThat(seen)
                    .containsExactly("t-0 0..0 0", "t-1 0..2 " + p1.log().activeSegmentSizeBytes());
            assertThat(p1.log().activeSegmentSizeBytes()).isPositive();
        }
    }
}
