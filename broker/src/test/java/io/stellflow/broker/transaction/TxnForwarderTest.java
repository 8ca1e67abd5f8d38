package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.TransactionResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link TxnForwarder}'s routes and outcomes with a fake broker-to-broker client: run here when this
 * broker leads the id's partition, else the body forwarded with the client's apiKey and version and
 * the answer relayed byte for byte; COORDINATOR_NOT_AVAILABLE for no leader, a failed or timed-out
 * send and a coordinator that moved twice; one retry at the new leader after NOT_COORDINATOR; a
 * closed client connection sends nothing; a request from another broker is never forwarded again.
 */
class TxnForwarderTest {
    private static final int SELF = 1;
    private static final byte[] BODY = {0, 2, 't', 'x'};

    private record Sent(int destination, short apiKey, short version, long forwardId, byte[] body) {}

    private final List<Sent> sent = new ArrayList<>();
    private final List<CompletableFuture<byte[]>> answers = new ArrayList<>();
    private final AtomicReference<MetadataImage> image =
            new AtomicReference<>(BrokerMarkerWriterTest.image(TransactionStateTopic.NAME, 1, 2, -1));
    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final TxnForwarder forwarder =
            new TxnForwarder(SELF, image::get, (destination, apiKey, version, forwardId, body) -> {
                sent.add(new Sent(destination, apiKey, version, forwardId, body.clone()));
                CompletableFuture<byte[]> f = new CompletableFuture<>();
                answers.add(f);
                return f;
            });

    @AfterEach
    void release() {
        channel.finishAndReleaseAll();
    }

    private RequestContext context(short apiKey, short version, String clientId) {
        return new RequestContext(channel, RequestHeader.of(apiKey, version, 7, clientId));
    }

    private int routeInit(int partition, String clientId) {
        return forwarder.route(
                context(ApiKeys.INIT_PRODUCER_ID, (short) 0, clientId), partition, BODY, InitProducerIdResponse::error);
    }

    /** The one response written to the client: its body. */
    private byte[] answered() {
        ByteBuf frame = channel.readOutbound();
        assertThat(frame).as("a response was written").isNotNull();
        try {
            int bodyStart = frame.readerIndex() + Frames.LENGTH_FIELD_SIZE + ResponseHeader.SIZE;
            assertThat(frame.getInt(frame.readerIndex() + Frames.LENGTH_FIELD_SIZE))
                    .as("correlation id")
                    .isEqualTo(7);
            return ByteBufUtil.getBytes(frame, bodyStart, frame.writerIndex() - bodyStart);
        } finally {
            frame.release();
        }
    }

    private static byte[] bytesOf(io.stellflow.protocol.message.ApiMessage m) {
        ByteBuf b = Unpooled.buffer();
        m.write(b);
        return ByteBufUtil.getBytes(b);
    }

    @Test
    void theLeaderOfThePartitionRunsItsRequestsItself() {
        assertThat(routeInit(0, "sdk")).isEqualTo(TxnForwarder.LOCAL);
        assertThat(sent).isEmpty();
        assertThat((Object) channel.readOutbound()).isNull();
    }

    @Test
    void aRequestOfAnIdLedElsewhereIsForwardedAsReceivedAndItsAnswerRelayedByteForByte() {
        RequestContext ctx = context(ApiKeys.END_TRANSACTION, (short) 1, "sdk");
        int route = forwarder.route(
                ctx, 1, BODY, code -> new TransactionResponse(code, 5, (short) 0, TransactionResponse.FAILED));
        assertThat(route).isEqualTo(TxnForwarder.HANDLED);
        assertThat(sent).hasSize(1);
        Sent s = sent.get(0);
        assertThat(s.destination()).isEqualTo(2);
        assertThat(s.apiKey()).isEqualTo(ApiKeys.END_TRANSACTION);
        assertThat(s.version()).as("the client's version, not re-encoded").isEqualTo((short) 1);
        assertThat(s.body()).isEqualTo(BODY);
        assertThat((Object) channel.readOutbound())
                .as("nothing before the answer")
                .isNull();
        // An answer in a layout the forwarder does not know: relayed untouched.
        byte[] answer = {0, 0, 1, 2, 3, 4, 5};
        answers.get(0).complete(answer);
        assertThat(answered()).isEqualTo(answer);
    }

    @Test
    void aPartitionWithoutLeaderIsCoordinatorNotAvailableAndNothingIsSent() {
        assertThat(routeInit(2, "sdk")).isEqualTo(TxnForwarder.HANDLED);
        assertThat(sent).isEmpty();
        assertThat(InitProducerIdResponse.read(Unpooled.wrappedBuffer(answered())))
                .isEqualTo(InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE));
    }

    @Test
    void anUnreachableOrSilentCoordinatorIsCoordinatorNotAvailable() {
        for (Exception failure : List.of(
                new IOException("cannot connect to broker 2"), new TimeoutException("no answer within 30000 ms"))) {
            answers.clear();
            routeInit(1, "sdk");
            answers.get(0).completeExceptionally(failure);
            assertThat(InitProducerIdResponse.read(Unpooled.wrappedBuffer(answered())))
                    .as(failure.toString())
                    .isEqualTo(InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE));
        }
        // A truncated answer (shorter than an error code) is no answer.
        answers.clear();
        routeInit(1, "sdk");
        answers.get(0).complete(new byte[] {0});
        assertThat(InitProducerIdResponse.read(Unpooled.wrappedBuffer(answered())))
                .isEqualTo(InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE));
    }

    @Test
    void aCoordinatorThatMovedIsLookedUpOnceMoreThenCoordinatorNotAvailable() {
        byte[] notCoordinator = bytesOf(InitProducerIdResponse.error(Errors.NOT_COORDINATOR));
        // Moved to broker 3: forwarded there, and its answer relayed.
        routeInit(1, "sdk");
        image.set(BrokerMarkerWriterTest.image(TransactionStateTopic.NAME, 1, 3, -1));
        answers.get(0).complete(notCoordinator);
        assertThat(sent).extracting(Sent::destination).containsExactly(2, 3);
        byte[] ok = bytesOf(new InitProducerIdResponse(Errors.NONE, 1000, (short) 0));
        answers.get(1).complete(ok);
        assertThat(answered()).isEqualTo(ok);

        // Broker 3 answers NOT_COORDINATOR too, after a move back to 2: no third send.
        sent.clear();
        answers.clear();
        routeInit(1, "sdk");
        image.set(BrokerMarkerWriterTest.image(TransactionStateTopic.NAME, 1, 2, -1));
        answers.get(0).complete(notCoordinator);
        answers.get(1).complete(notCoordinator);
        assertThat(sent).extracting(Sent::destination).containsExactly(3, 2);
        assertThat(InitProducerIdResponse.read(Unpooled.wrappedBuffer(answered())))
                .isEqualTo(InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE));

        // NOT_COORDINATOR while the metadata still names the same broker: not sent there again.
        sent.clear();
        answers.clear();
        routeInit(1, "sdk");
        answers.get(0).complete(notCoordinator);
        assertThat(sent).hasSize(1);
        assertThat(InitProducerIdResponse.read(Unpooled.wrappedBuffer(answered())))
                .isEqualTo(InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE));
    }

    @Test
    void aRequestOfAClosedConnectionIsNeitherSentNorAnswered() {
        channel.close();
        assertThat(routeInit(1, "sdk")).isEqualTo(TxnForwarder.HANDLED);
        assertThat(sent).as("dropped, not forwarded").isEmpty();
        assertThat((Object) channel.readOutbound()).isNull();
    }

    @Test
    void aRequestForwardedByAnotherBrokerOrWithoutItsTopicRunsHere() {
        assertThat(routeInit(1, BrokerRequests.CLIENT_ID_PREFIX + 3))
                .as("never forwarded twice")
                .isEqualTo(TxnForwarder.LOCAL);
        assertThat(routeInit(-Errors.COORDINATOR_NOT_AVAILABLE, "sdk"))
                .as("__transaction_state not there yet: the coordinator answers")
                .isEqualTo(TxnForwarder.LOCAL);
        assertThat(sent).isEmpty();
    }

    @Test
    void aForwardIsOpenWhileOutstandingWithItsClientConnectedAndUnknownOnceAnswered() {
        assertThat(routeInit(1, "sdk")).isEqualTo(TxnForwarder.HANDLED);
        long first = sent.get(0).forwardId();
        assertThat(forwarder.isOpen(first)).as("outstanding, client connected").isTrue();
        assertThat(forwarder.isOpen(first + 1)).as("never made").isFalse();
        answers.get(0).complete(bytesOf(new InitProducerIdResponse(Errors.NONE, 5, (short) 0)));
        assertThat(forwarder.isOpen(first)).as("answered: unknown").isFalse();
        assertThat(forwarder.outstanding()).isZero();
        answered();

        assertThat(routeInit(1, "sdk")).isEqualTo(TxnForwarder.HANDLED);
        long second = sent.get(1).forwardId();
        assertThat(second).as("each forward has its own id").isNotEqualTo(first);
        channel.close();
        assertThat(forwarder.isOpen(second))
                .as("the client closed its connection")
                .isFalse();
        answers.get(1).completeExceptionally(new java.io.IOException("gone"));
        assertThat(forwarder.outstanding()).isZero();
    }

    @Test
    void aForwardKeepsItsIdWhenSentAgainToTheNewCoordinator() {
        assertThat(routeInit(1, "sdk")).isEqualTo(TxnForwarder.HANDLED);
        image.set(BrokerMarkerWriterTest.image(TransactionStateTopic.NAME, 1, 3, -1));
        answers.get(0).complete(bytesOf(InitProducerIdResponse.error(Errors.NOT_COORDINATOR)));
        assertThat(sent).hasSize(2);
        assertThat(sent.get(1).destination()).isEqualTo(3);
        assertThat(sent.get(1).forwardId()).isEqualTo(sent.get(0).forwardId());
        assertThat(forwarder.isOpen(sent.get(1).forwardId())).isTrue();
        answers.get(1).complete(bytesOf(new InitProducerIdResponse(Errors.NONE, 5, (short) 0)));
        assertThat(forwarder.outstanding()).isZero();
        answered();
    }

    @Test
    void theOriginOfAForwardIsReadFromItsClientId() {
        assertThat(TxnForwarder.forwardOf(BrokerRequests.CLIENT_ID_PREFIX + 3 + BrokerRequests.FORWARD_TAG + 17))
                .isEqualTo(new TxnForwarder.Forward(3, 17));
        assertThat(TxnForwarder.forwardOf(BrokerRequests.CLIENT_ID_PREFIX + 3))
                .as("a broker's own request, or a forward of an older broker")
                .isNull();
        assertThat(TxnForwarder.forwardOf("sdk")).isNull();
        assertThat(TxnForwarder.forwardOf(null)).isNull();
        assertThat(TxnForwarder.forwardOf(BrokerRequests.CLIENT_ID_PREFIX + "x" + BrokerRequests.FORWARD_TAG + 1))
                .isNull();
        assertThat(TxnForwarder.forwardOf(BrokerRequests.CLIENT_ID_PREFIX + 3 + BrokerRequests.FORWARD_TAG))
                .isNull();
    }
}
