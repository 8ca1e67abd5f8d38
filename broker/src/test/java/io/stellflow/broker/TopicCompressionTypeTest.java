package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.telemetry.CompressionTelemetry;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Topic and broker {@code compression.type} (Kafka's semantics, issue #21): {@code producer} keeps
 * the producer's codec, {@code uncompressed} stores plain batches, a codec name recompresses every
 * other batch at the topic's level; the stored bytes are exactly what {@link BatchCompression} makes
 * of the produced batch (same offsets, timestamps, producer fields), each rewrite is counted, bad
 * values are refused at creation. With and without append agents.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class TopicCompressionTypeTest {
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    private StellflowServer server;

    private RawClient start(Properties extra) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.putAll(extra);
        server = NODES.start(props);
        return new RawClient(server.port());
    }

    private static byte[] compress(byte[] plain, CompressionType type, CompressionConfig levels) {
        ByteBuf out = Unpooled.buffer();
        try (CompressionCodec codec = CompressionCodecs.codec(type, levels)) {
            BatchCompression.compress(Unpooled.wrappedBuffer(plain), 0, codec, out);
        }
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    /** Stored batches of partition 0 from offset 0 (Fetch v1: stored bytes untouched), one array each. */
    private static List<byte[]> stored(RawClient client, String topic) throws IOException {
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                8 << 20,
                (byte) 0,
                0,
                List.of(new FetchTopic(topic, List.of(new FetchPartition(0, -1, 0, -1L, 8 << 20)))));
        client.send(RequestHeader.of(ApiKeys.FETCH, (short) 1, 7, "test"), request);
        byte[] frame = client.receiveRawFrame();
        ByteBuf buf = Unpooled.wrappedBuffer(frame, 4, frame.length - 4);
        buf.skipBytes(4 + 8); // correlationId, headerVersion, errorCode, throttleTimeMs
        FetchResponseV1.PartitionData p =
                FetchResponseV1.read(buf).responses().get(0).partitions().get(0);
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        ByteBuf records = p.records();
        List<byte[]> batches = new java.util.ArrayList<>();
        for (int pos = 0; pos < records.readableBytes(); pos += RecordBatchLayout.batchSize(records, pos)) {
            batches.add(ByteBufUtil.getBytes(records, pos, RecordBatchLayout.batchSize(records, pos)));
        }
        return batches;
    }

    private static byte[] fromMagic(byte[] batch) {
        return Arrays.copyOfRange(batch, RecordBatchLayout.MAGIC_OFFSET, batch.length);
    }

    @Test
    void eachTopicSettingStoresWhatItSays() throws Exception {
        checkTopicSettings(new Properties());
    }

    @Test
    void theRequestThreadsRewriteTheSameWithoutAppendAgents() throws Exception {
        Properties extra = new Properties();
        extra.setProperty("num.append.agents", "0");
        checkTopicSettings(extra);
    }

    private void checkTopicSettings(Properties extra) throws Exception {
        try (RawClient client = start(extra)) {
            byte[] plain = CompressedProduceTest.plainBatch(100, 0);
            byte[] lz4 = compress(plain, CompressionType.LZ4, CompressionConfig.DEFAULT);
            CompressionConfig zstd7 = CompressionConfig.DEFAULT.withLevel(CompressionType.ZSTD, 7);
            assertThat(TestBroker.createTopic(server, "keep", 1, Map.of())).isEqualTo(ErrorCode.NONE);
            assertThat(TestBroker.createTopic(server, "plain", 1, Map.of("compression.type", "uncompressed")))
                    .isEqualTo(ErrorCode.NONE);
            assertThat(TestBroker.createTopic(
                            server, "zstd", 1, Map.of("compression.type", "zstd", "compression.zstd.level", "7")))
                    .isEqualTo(ErrorCode.NONE);
            for (String topic : List.of("keep", "plain", "zstd")) {
                assertThat(Requests.produceOne(client, topic, 0, lz4).errorCode())
                        .isEqualTo(Errors.NONE);
                assertThat(Requests.produceOne(client, topic, 0, plain).errorCode())
                        .isEqualTo(Errors.NONE);
            }
            List<byte[]> keep = stored(client, "keep");
            assertThat(fromMagic(keep.get(0))).isEqualTo(fromMagic(lz4));
            assertThat(fromMagic(keep.get(1))).isEqualTo(fromMagic(plain));

            List<byte[]> uncompressed = stored(client, "plain");
            assertThat(fromMagic(uncompressed.get(0)))
                    .as("lz4 batch stored uncompressed")
                    .isEqualTo(fromMagic(plain));
            assertThat(fromMagic(uncompressed.get(1))).isEqualTo(fromMagic(plain));

            byte[] expectedZstd = compress(plain, CompressionType.ZSTD, zstd7);
            List<byte[]> zstd = stored(client, "zstd");
            assertThat(fromMagic(zstd.get(0))).as("lz4 batch recompressed").isEqualTo(fromMagic(expectedZstd));
            assertThat(fromMagic(zstd.get(1))).as("plain batch compressed").isEqualTo(fromMagic(expectedZstd));
            assertThat(TestBroker.partition(server, "zstd", 0).logEndOffset()).isEqualTo(200);
            // The second batch keeps its own offsets: base offset 100 as produced after the first.
            assertThat(RecordBatchLayout.lastOffsetDelta(Unpooled.wrappedBuffer(zstd.get(1)), 0))
                    .isEqualTo(99);

            CompressionTelemetry metrics = server.telemetry().metrics().compression();
            assertThat(metrics.batches(CompressionTelemetry.RECOMPRESS, CompressionType.ZSTD))
                    .isEqualTo(2);
            assertThat(metrics.batches(CompressionTelemetry.RECOMPRESS, CompressionType.LZ4))
                    .isEqualTo(1);
            assertThat(metrics.batches(CompressionTelemetry.VALIDATE, CompressionType.LZ4))
                    .isEqualTo(3);
        }
    }

    @Test
    void theBrokerDefaultAppliesToTopicsWithoutTheirOwnAndBadValuesAreRefused() throws Exception {
        Properties extra = new Properties();
        extra.setProperty("compression.type", "gzip");
        extra.setProperty("compression.gzip.level", "1");
        try (RawClient client = start(extra)) {
            assertThat(TestBroker.createTopic(server, "byDefault", 1, Map.of())).isEqualTo(ErrorCode.NONE);
            assertThat(TestBroker.createTopic(server, "own", 1, Map.of("compression.type", "producer")))
                    .isEqualTo(ErrorCode.NONE);
            assertThat(TestBroker.createTopic(server, "bad", 1, Map.of("compression.type", "brotli")))
                    .isEqualTo(ErrorCode.INVALID_CONFIG);
            // Kafka's names are case-sensitive: ZSTD and Gzip are refused as Kafka refuses them.
            for (String other : List.of("ZSTD", "Gzip", "Producer")) {
                assertThat(TestBroker.createTopic(server, "case" + other, 1, Map.of("compression.type", other)))
                        .as(other)
                        .isEqualTo(ErrorCode.INVALID_CONFIG);
            }
            assertThat(TestBroker.createTopic(server, "badLevel", 1, Map.of("compression.lz4.level", "18")))
                    .isEqualTo(ErrorCode.INVALID_CONFIG);
            byte[] plain = CompressedProduceTest.plainBatch(20, 0);
            assertThat(Requests.produceOne(client, "byDefault", 0, plain).errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(Requests.produceOne(client, "own", 0, plain).errorCode()).isEqualTo(Errors.NONE);
            byte[] gzip1 =
                    compress(plain, CompressionType.GZIP, CompressionConfig.DEFAULT.withLevel(CompressionType.GZIP, 1));
            assertThat(fromMagic(stored(client, "byDefault").get(0))).isEqualTo(fromMagic(gzip1));
            assertThat(fromMagic(stored(client, "own").get(0))).isEqualTo(fromMagic(plain));
        }
    }

    @Test
    void aBatchThatDecompressesPastMessageMaxBytesIsMessageTooLarge() throws Exception {
        Properties extra = new Properties();
        extra.setProperty("message.max.bytes", "20000");
        try (RawClient client = start(extra)) {
            assertThat(TestBroker.createTopic(server, "plain", 1, Map.of("compression.type", "uncompressed")))
                    .isEqualTo(ErrorCode.NONE);
            byte[] plain = CompressedProduceTest.plainBatch(300, 0); // about 40 KB of log lines
            assertThat(plain.length).isGreaterThan(20_000);
            byte[] zstd = compress(plain, CompressionType.ZSTD, CompressionConfig.DEFAULT);
            assertThat(zstd.length).isLessThan(20_000);
            assertThat(Requests.produceOne(client, "plain", 0, zstd).errorCode())
                    .isEqualTo(Errors.MESSAGE_TOO_LARGE);
            byte[] small =
                    compress(CompressedProduceTest.plainBatch(10, 0), CompressionType.ZSTD, CompressionConfig.DEFAULT);
            assertThat(Requests.produceOne(client, "plain", 0, small).baseOffset())
                    .isZero();
            assertThat(TestBroker.partition(server, "plain", 0).logEndOffset()).isEqualTo(10);
        }
    }
}
