package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class ProduceTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    /** One node per transport for the tests without broker settings of their own. */
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    /** Nodes of the tests with broker settings of their own. */
    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    /** The node of this test: the shared one, or one of its own ({@link #ownBroker}). */
    StellflowServer server;

    /** Each test's topic, named after it, with 2 partitions. */
    private String t;

    @BeforeEach
    void name(TestInfo test) {
        t = test.getTestMethod().orElseThrow().getName();
    }

    /** A client of the shared node, with this test's topic. */
    private RawClient startWithTopic() throws Exception {
        server = BROKERS.get(transport);
        return connectWithTopic();
    }

    /** A client of a node of this test's own, with {@code props}, and its topic. */
    private RawClient ownBroker(Properties props) throws Exception {
        server = NODES.start(props);
        return connectWithTopic();
    }

    private RawClient connectWithTopic() throws Exception {
        RawClient client = new RawClient(server.port());
        Requests.createTopic(client, t, 2);
        return client;
    }

    private long logEnd(String topic, int partition) {
        return TestBroker.partition(server, topic, partition).logEndOffset();
    }

    @Test
    void aLargeFrameIsReadStraightIntoItsBufferAndStoredIntact() throws Exception {
        // Its own node: the frame byte counters sum over every open connection of the broker.
        try (RawClient client = ownBroker(TestBroker.props(NODES.dir(), transport))) {
            ByteBuf out = Unpooled.buffer();
            RecordBatchBuilder builder = new RecordBatchBuilder(out, 1000);
            SplittableRandom random = new SplittableRandom(7);
            byte[] value = new byte[1000];
            for (int i = 0; i < 1000; i++) {
                random.nextBytes(value);
                builder.append(1000, null, value);
            }
            builder.close();
            byte[] batch = ByteBufUtil.getBytes(out);
            out.release();
            assertThat(Requests.produceOne(client, t, 0, batch).errorCode()).isEqualTo(Errors.NONE);
            long[] copiedAndInPlace = server.framePayloadBytes();
            // The read carrying the length prefix is copied (at most one receive buffer, 64 KiB);
            // every later read of the ~1 MB frame went into the frame buffer itself.
            assertThat(copiedAndInPlace[0]).isLessThanOrEqualTo(65_536);
            assertThat(copiedAndInPlace[1]).isGreaterThan(batch.length - 65_536L);
            FetchResponse.PartitionData p = Requests.fetchOne(client, Requests.fetch(t, 0, 0, 0, 2 << 20, -1));
            ByteBuf records = p.records();
            assertThat(records.readableBytes()).isEqualTo(batch.length);
            assertThat(ByteBufUtil.getBytes(
                            records, RecordBatchLayout.MAGIC_OFFSET, batch.length - RecordBatchLayout.MAGIC_OFFSET))
                    .isEqualTo(Arrays.copyOfRange(batch, RecordBatchLayout.MAGIC_OFFSET, batch.length));
        }
    }

    @Test
    void offsetsArePerRecordAcrossBatchesAndRequests() throws Exception {
        try (RawClient client = startWithTopic()) {
            byte[] twoBatches = Requests.concat(Requests.batch(3, 1000), Requests.batch(2, 2000));
            PartitionResponse first = Requests.produceOne(client, t, 0, twoBatches);
            assertThat(first).isEqualTo(new PartitionResponse(0, Errors.NONE, 0, 0, -1, 0));
            PartitionResponse second = Requests.produceOne(client, t, 0, Requests.g2());
            assertThat(second.baseOffset()).isEqualTo(5);
            assertThat(logEnd(t, 0)).isEqualTo(6);
            assertThat(Requests.produceOne(client, t, 1, Requests.g2()).baseOffset())
                    .isZero();
        }
    }

    @Test
    void everyAcksValueGetsExactlyOneResponseAfterTheAppend() throws Exception {
        try (RawClient client = startWithTopic()) {
            long offset = 0;
            for (short acks : new short[] {0, 1, -1}) {
                RawClient.Response r =
                        client.call(ApiKeys.PRODUCE, 100 + acks, Requests.produce(t, 0, Requests.g2(), acks));
                PartitionResponse p = ProduceResponse.read(r.body())
                        .responses()
                        .get(0)
                        .partitions()
                        .get(0);
                assertThat(p.errorCode()).isEqualTo(Errors.NONE);
                assertThat(p.baseOffset()).isEqualTo(offset++);
            }
            assertThat(logEnd(t, 0)).isEqualTo(3);
        }
    }

    @Test
    void partialSuccessKeepsRequestOrderAndHeaderZero() throws Exception {
        try (RawClient client = startWithTopic()) {
            ProduceRequest request = new ProduceRequest(
                    null,
                    (short) 1,
                    30_000,
                    List.of(
                            new ProduceRequest.TopicData(
                                    t,
                                    List.of(
                                            new ProduceRequest.PartitionData(7, Unpooled.wrappedBuffer(Requests.g2())),
                                            new ProduceRequest.PartitionData(1, Unpooled.wrappedBuffer(Requests.g2())),
                                            new ProduceRequest.PartitionData(0, null))),
                            new ProduceRequest.TopicData(
                                    "missing",
                                    List.of(new ProduceRequest.PartitionData(
                                            0, Unpooled.wrappedBuffer(Requests.g2()))))));
            RawClient.Response r = client.call(ApiKeys.PRODUCE, 5, request);
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            ProduceResponse body = ProduceResponse.read(r.body());
            assertThat(body.responses().get(0).topic()).isEqualTo(t);
            assertThat(body.responses().get(0).partitions())
                    .containsExactly(
                            new PartitionResponse(7, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1, -1),
                            new PartitionResponse(1, Errors.NONE, 0, 0, -1, 0),
                            new PartitionResponse(0, Errors.INVALID_RECORD, -1, 0, -1, 0));
            assertThat(body.responses().get(1).partitions())
                    .containsExactly(new PartitionResponse(0, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1, -1));
        }
    }

    @Test
    void invalidBatchesAreRejectedAndNothingIsAppended() throws Exception {
        try (RawClient client = startWithTopic()) {
            Requests.produceOne(client, t, 0, Requests.g2());

            byte[] badCrc = Requests.g2();
            badCrc[RecordBatchLayout.CRC_OFFSET] ^= 1;
            assertThat(Requests.produceOne(client, t, 0, badCrc).errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE);

            byte[] magic2 = Requests.g2();
            magic2[RecordBatchLayout.MAGIC_OFFSET] = 2;
            assertThat(Requests.produceOne(client, t, 0, magic2).errorCode()).isEqualTo(Errors.INVALID_RECORD);

            byte[] recordPastEnd = Requests.recordLengthPastBatchEnd();
            assertThat(Requests.produceOne(client, t, 0, recordPastEnd).errorCode())
                    .isEqualTo(Errors.INVALID_RECORD);

            byte[] truncated = Arrays.copyOf(Requests.g2(), 100);
            assertThat(Requests.produceOne(client, t, 0, truncated).errorCode()).isEqualTo(Errors.INVALID_RECORD);

            // A good batch followed by a bad one: the whole partition is rejected.
            byte[] goodThenBad = Requests.concat(Requests.g2(), badCrc);
            assertThat(Requests.produceOne(client, t, 0, goodThenBad).errorCode())
                    .isEqualTo(Errors.CORRUPT_MESSAGE);

            assertThat(Requests.produceOne(client, t, 0, new byte[0]).errorCode())
                    .isEqualTo(Errors.INVALID_RECORD);
            assertThat(logEnd(t, 0)).isEqualTo(1);
        }
    }

    @Test
    void batchAboveMessageMaxBytesIsMessageTooLarge() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("message.max.bytes", "1000");
        try (RawClient client = ownBroker(props)) {
            byte[] big = Requests.batchOfSize(1, 2000, 1);
            assertThat(Requests.produceOne(client, t, 0, big).errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
            assertThat(Requests.produceOne(client, t, 0, Requests.g2()).errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(logEnd(t, 0)).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 0})
    void anIdempotentBatchIsAppendedOnceAndItsRetryGetsTheSameOffset(int appendAgents) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("num.append.agents", Integer.toString(appendAgents));
        try (RawClient client = ownBroker(props)) {
            assertThat(Requests.produceOne(client, t, 0, Requests.batch(2, 1000))
                            .baseOffset())
                    .isZero();
            byte[] batch = IdempotentProduceTest.batch(5, 0, 0, 1000, "a", "b");
            assertThat(Requests.produceOne(client, t, 0, batch).baseOffset()).isEqualTo(2);
            byte[] retry = IdempotentProduceTest.batch(5, 0, 0, 2000, "a", "b");
            ProduceResponse.PartitionResponse again = Requests.produceOne(client, t, 0, retry);
            assertThat(again.errorCode()).isEqualTo(Errors.NONE);
            assertThat(again.baseOffset()).isEqualTo(2);
            assertThat(Requests.produceOne(client, t, 0, IdempotentProduceTest.batch(5, 0, 1, 1000, "c"))
                            .errorCode())
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            assertThat(logEnd(t, 0)).isEqualTo(4);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 0})
    void anIdempotentRetryOnATopicThatRecompressesGetsTheSameOffset(int appendAgents) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("num.append.agents", Integer.toString(appendAgents));
        server = NODES.start(props);
        String topic = t + "-gzip";
        assertThat(TestBroker.createTopic(server, topic, 1, java.util.Map.of("compression.type", "gzip")))
                .isEqualTo(io.stellflow.controller.proto.ErrorCode.NONE);
        try (RawClient client = new RawClient(server.port())) {
            byte[] first = IdempotentProduceTest.batch(9, 0, 0, 1000, "a", "b");
            assertThat(Requests.produceOne(client, topic, 0, first).baseOffset())
                    .isZero();
            // Stored gzip-compressed; the retry is compressed the same way and compared as stored.
            byte[] retry = IdempotentProduceTest.batch(9, 0, 0, 5000, "a", "b");
            assertThat(Requests.produceOne(client, topic, 0, retry).baseOffset())
                    .isZero();
            byte[] other = IdempotentProduceTest.batch(9, 0, 0, 1000, "a", "X");
            assertThat(Requests.produceOne(client, topic, 0, other).errorCode())
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            assertThat(logEnd(topic, 0)).isEqualTo(2);
            ByteBuf stored = Unpooled.buffer();
            try {
                TestBroker.partition(server, topic, 0)
                        .log()
                        .readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, stored);
                assertThat(RecordBatchLayout.attributes(stored, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                        .as("stored gzip (codec 1)")
                        .isEqualTo(1);
            } finally {
                stored.release();
            }
        }
    }

    @Test
    void requestLevelViolationsAreHeaderOnlyInvalidRequest() throws Exception {
        try (RawClient client = startWithTopic()) {
            RawClient.Response badAcks =
                    client.call(ApiKeys.PRODUCE, 1, Requests.produce(t, 0, Requests.g2(), (short) 2));
            assertThat(badAcks.errorCode()).isEqualTo(Errors.INVALID_REQUEST);
            assertThat(badAcks.body().readableBytes()).isZero();
            ProduceRequest duplicate = new ProduceRequest(
                    null,
                    (short) 1,
                    1000,
                    List.of(new ProduceRequest.TopicData(
                            t,
                            List.of(
                                    new ProduceRequest.PartitionData(0, Unpooled.wrappedBuffer(Requests.g2())),
                                    new ProduceRequest.PartitionData(0, Unpooled.wrappedBuffer(Requests.g2()))))));
            assertThat(client.call(ApiKeys.PRODUCE, 2, duplicate).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
            assertThat(logEnd(t, 0)).isZero();
        }
    }

    @Test
    void autoCreateOnProduceWhenEnabled() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("auto.create.topics.enable", "true");
        props.setProperty("num.partitions", "3");
        server = NODES.start(props);
        try (RawClient client = new RawClient(server.port())) {
            assertThat(Requests.produceOne(client, "fresh", 2, Requests.g2()).errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(TestBroker.topic(server, "fresh").partitions()).hasSize(3);
        }
    }
}
