package io.stellflow.broker.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shape of zero-copy Fetch responses: v1 sends each partition's stored batches as ONE file
 * region however many batches it holds; v0 needs a region per batch (each batch's first 4 bytes
 * are patched in the head).
 */
class FetchReaderRegionsTest {
    private static final int BATCHES = 20;

    @TempDir
    Path dir;

    private static ByteBuf batch(int first) {
        ByteBuf buf = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(buf, 1000L);
        for (int i = 0; i < 3; i++) {
            b.append(1000L, null, ("v" + (first + i)).getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        return buf;
    }

    private int regionsFor(LocalPartitions registry, short version) {
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                64 << 20,
                (byte) 0,
                0,
                List.of(new FetchRequest.FetchTopic(
                        "t",
                        List.of(
                                new FetchRequest.FetchPartition(0, -1, 0, -1L, 16 << 20),
                                new FetchRequest.FetchPartition(1, -1, 0, -1L, 16 << 20)))));
        EmbeddedChannel channel = new EmbeddedChannel();
        RequestContext context = new RequestContext(channel, RequestHeader.of(ApiKeys.FETCH, version, 1, "test"));
        FetchResult result = new FetchReader(true).read(FetchPlan.resolve(request, registry, version), context);
        try {
            assertThat(result.recordsBytes()).isPositive();
            return result.frame().regionCount();
        } finally {
            result.release();
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void v1SendsOneRegionPerPartitionAndV0OnePerBatch() throws Exception {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            registry.create("t", 2);
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < BATCHES; i++) {
                    ByteBuf b = batch(i * 3);
                    registry.partition("t", p).appendAsLeader(b);
                    b.release();
                }
            }
            assertThat(regionsFor(registry, (short) 1)).isEqualTo(2);
            assertThat(regionsFor(registry, (short) 0)).isEqualTo(2 * BATCHES);
        }
    }
}
