package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.network.TransportType;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.testsupport.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bad-input list, on every transport; after each case the broker still serves another client.
 * One node per transport serves every case (so each case also shows the earlier ones left it
 * healthy); each case has a topic of its own, named after it.
 */
@IntegrationTest
class BadInputTest {
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    StellflowServer server;
    String t;

    @BeforeEach
    void name(TestInfo test) {
        t = test.getTestMethod().orElseThrow().getName();
    }

    private RawClient start(String transport) throws Exception {
        assumeTrue(
                Transport.isAvailable(TransportType.parse("transport", transport)),
                transport + " is not available on this machine");
        server = BROKERS.get(transport);
        assertThat(server.transport().type().configName()).isEqualTo(transport);
        RawClient client = new RawClient(server.port());
        Requests.createTopic(client, t, 1);
        return client;
    }

    private void assertAnotherClientIsServed() throws Exception {
        try (RawClient other = new RawClient(server.port())) {
            RawClient.Response r =
                    other.call(ApiKeys.API_VERSIONS, 4242, new ApiVersionsRequest(null, null, List.of()));
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            assertThat(ApiVersionsResponse.read(r.body()).apiVersions()).hasSize(34);
        }
    }

    private void assertStillServes(RawClient client) throws Exception {
        RawClient.Response r = client.call(ApiKeys.METADATA, 99, new MetadataRequest(List.of(t), false, false, false));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void negativeFrameLengthClosesOnlyThatConnection(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            client.sendRaw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xf0, 1, 2, 3});
            assertThat(client.isClosedByPeer()).isTrue();
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void payloadBelowTenBytesClosesTheConnection(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            client.sendRaw(new byte[] {0, 0, 0, 4, 0, 0, 0, 0});
            assertThat(client.isClosedByPeer()).isTrue();
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void shortHeaderIsInvalidRequestAndTheConnectionStays(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            // 12 payload bytes: apiKey 1, apiVersion 0, headerVersion 2, correlationId 5, then 2 bytes.
            client.sendRaw(new byte[] {0, 0, 0, 12, 0, 1, 0, 0, 0, 2, 0, 0, 0, 5, 0, 1});
            RawClient.Response r = client.receive();
            assertThat(r.correlationId()).isEqualTo(5);
            assertThat(r.errorCode()).isEqualTo(Errors.INVALID_REQUEST);
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void oversizedFramesAreDiscardedAndAnsweredAndTheConnectionSurvives(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            sendOversized(client, ApiKeys.PRODUCE, 11);
            RawClient.Response produce = client.receive();
            assertThat(produce.correlationId()).isEqualTo(11);
            assertThat(produce.errorCode()).isEqualTo(Errors.RECORD_LIST_TOO_LARGE);
            assertThat(produce.body().readableBytes()).isZero();

            sendOversized(client, ApiKeys.METADATA, 12);
            RawClient.Response metadata = client.receive();
            assertThat(metadata.correlationId()).isEqualTo(12);
            assertThat(metadata.errorCode()).isEqualTo(Errors.INVALID_REQUEST);

            assertStillServes(client);
            assertThat(TestBroker.partition(server, t, 0).logEndOffset()).isZero();
        }
        assertAnotherClientIsServed();
    }

    private static void sendOversized(RawClient client, short apiKey, int correlationId) throws Exception {
        int frameLength = Frames.MAX_FRAME_LENGTH + 1;
        ByteBuf head = Unpooled.buffer();
        head.writeInt(frameLength);
        RequestHeader.of(apiKey, (short) 0, correlationId, "big").write(head);
        int sent = head.readableBytes() - 4;
        client.sendRaw(head.array(), head.arrayOffset(), head.readableBytes());
        byte[] chunk = new byte[1 << 20];
        while (sent < frameLength) {
            int n = Math.min(chunk.length, frameLength - sent);
            client.sendRaw(chunk, 0, n);
            sent += n;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void unknownApiKeyIsFeatureNotEnabled(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            for (short key : new short[] {14, 19, 52, 99, -1}) {
                client.sendWithBody(RequestHeader.of(key, (short) 0, 30, "c"), new byte[] {1, 2, 3});
                RawClient.Response r = client.receive();
                assertThat(r.correlationId()).isEqualTo(30);
                assertThat(r.errorCode()).isEqualTo(Errors.FEATURE_NOT_ENABLED);
                assertThat(r.body().readableBytes()).isZero();
            }
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void unknownApiVersionIsUnsupportedVersion(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            client.send(
                    RequestHeader.of(ApiKeys.METADATA, (short) 1, 31, "c"),
                    new MetadataRequest(List.of(), false, false, false));
            RawClient.Response r = client.receive();
            assertThat(r.correlationId()).isEqualTo(31);
            assertThat(r.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION);
            assertThat(r.body().readableBytes()).isZero();
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void truncatedBodyIsInvalidRequest(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            client.sendWithBody(RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 32, "c"), new byte[] {(byte) 0xff});
            RawClient.Response r = client.receive();
            assertThat(r.correlationId()).isEqualTo(32);
            assertThat(r.errorCode()).isEqualTo(Errors.INVALID_REQUEST);
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void wrongCrcIsCorruptMessageAndNothingIsAppended(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            byte[] batch = Requests.g2();
            batch[batch.length - 1] ^= 0x55;
            assertThat(Requests.produceOne(client, t, 0, batch).errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE);
            assertThat(TestBroker.partition(server, t, 0).logEndOffset()).isZero();
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void recordLengthPastTheBatchEndIsInvalidRecordAndNothingIsAppended(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            assertThat(Requests.produceOne(client, t, 0, Requests.recordLengthPastBatchEnd())
                            .errorCode())
                    .isEqualTo(Errors.INVALID_RECORD);
            assertThat(TestBroker.partition(server, t, 0).logEndOffset()).isZero();
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void produceToAMissingTopicIsUnknownTopic(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            assertThat(Requests.produceOne(client, "missing", 0, Requests.g2()).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(TestBroker.topic(server, "missing")).isNull();
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void aProduceV2SequenceWithoutATransactionalIdIsInvalidRequestAndNothingIsAppended(String transport)
            throws Exception {
        try (RawClient client = start(transport)) {
            ProduceRequest bad = new ProduceRequest(
                    null,
                    5L,
                    (short) -1,
                    10_000,
                    List.of(new ProduceRequest.TopicData(
                            t, List.of(new ProduceRequest.PartitionData(0, Unpooled.wrappedBuffer(Requests.g2()))))));
            client.send(RequestHeader.of(ApiKeys.PRODUCE, (short) 2, 33, "c"), out -> bad.write(out, (short) 2));
            RawClient.Response r = client.receive();
            assertThat(r.correlationId()).isEqualTo(33);
            assertThat(r.errorCode()).isEqualTo(Errors.INVALID_REQUEST);
            assertThat(r.body().readableBytes()).isZero();
            // Produce v3 does not exist: UNSUPPORTED_VERSION, header-only.
            client.send(RequestHeader.of(ApiKeys.PRODUCE, (short) 3, 34, "c"), out -> bad.write(out, (short) 2));
            RawClient.Response v3 = client.receive();
            assertThat(v3.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION);
            assertThat(TestBroker.partition(server, t, 0).logEndOffset()).isZero();
            assertStillServes(client);
        }
        assertAnotherClientIsServed();
    }
}
