package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TxnOffsetCommitCall} over the wire against a real broker (in the client's package to reach
 * the package-private call): its first call meets a group coordinator whose {@code
 * __consumer_offsets} does not exist yet and retries through its creation and load; the offsets
 * appear at the group only when the transaction commits; a fenced epoch fails at once with
 * INVALID_PRODUCER_EPOCH.
 */
@IntegrationTest
class TxnOffsetCommitCallBrokerTest {
    private static final String TID = "etl-tx";
    private static final String GROUP = "etl";
    private static final TopicPartition P0 = new TopicPartition("in", 0);
    private static final TopicPartition P1 = new TopicPartition("in", 1);

    @TempDir
    Path dir;

    private static InitProducerIdResponse init(NetworkClient network, HostPort broker) {
        InitProducerIdResponse[] last = new InitProducerIdResponse[1];
        Wait.until(
                Duration.ofSeconds(20),
                () -> {
                    last[0] = network.send(
                                    broker,
                                    ApiKeys.INIT_PRODUCER_ID,
                                    new InitProducerIdRequest(TID)::write,
                                    InitProducerIdResponse::read)
                            .join();
                    return last[0].errorCode() == Errors.NONE;
                },
                "InitProducerId");
        return last[0];
    }

    private static short begin(NetworkClient network, HostPort broker, long pid, short epoch) {
        return network.send(
                        broker,
                        ApiKeys.BEGIN_TRANSACTION,
                        new BeginTransactionRequest(TID, pid, epoch)::write,
                        TransactionResponse::read)
                .join()
                .errorCode();
    }

    private static short end(NetworkClient network, HostPort broker, long pid, short epoch, boolean commit) {
        return network.send(
                        broker,
                        ApiKeys.END_TRANSACTION,
                        new EndTransactionRequest(TID, pid, epoch, commit)::write,
                        TransactionResponse::read)
                .join()
                .errorCode();
    }

    @Test
    void offsetsCommittedThroughTheCallAppearWhenTheTransactionCommits() throws Exception {
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(TxnBrokerProps.of(dir)))) {
            HostPort broker = new HostPort("127.0.0.1", server.port());
            Properties clientProps = new Properties();
            clientProps.setProperty("bootstrap.servers", broker.host() + ":" + broker.port());
            try (StellflowAdmin admin = new StellflowAdmin(clientProps);
                    NetworkClient network = new NetworkClient(ClientConfig.from(clientProps, "txn-offsets"))) {
                admin.createTopic("in", 2);
                MetadataCache metadata = new MetadataCache(network);
                TxnOffsetCommitCall call = new TxnOffsetCommitCall(network, metadata);
                NetworkGroupTransport groups = new NetworkGroupTransport(network, metadata);

                InitProducerIdResponse p = init(network, broker);
                assertThat(begin(network, broker, p.producerId(), p.producerEpoch()))
                        .isEqualTo(Errors.NONE);
                Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
                offsets.put(P0, 10L);
                offsets.put(P1, 20L);
                // __consumer_offsets does not exist yet: the call retries through its creation.
                call.commit(TID, p.producerId(), p.producerEpoch(), -1, GROUP, null, -1, offsets, 30_000);

                HostPort coordinator = groups.findCoordinator(GROUP).join();
                assertThat(groups.fetchOffsets(coordinator, GROUP, Set.of(P0, P1))
                                .join())
                        .as("pending until the commit")
                        .containsEntry(P0, -1L)
                        .containsEntry(P1, -1L);
                assertThat(end(network, broker, p.producerId(), p.producerEpoch(), true))
                        .isEqualTo(Errors.NONE);
                assertThat(groups.fetchOffsets(coordinator, GROUP, Set.of(P0, P1))
                                .join())
                        .containsEntry(P0, 10L)
                        .containsEntry(P1, 20L);

                // A new instance fences the old epoch: the call fails at once.
                InitProducerIdResponse again = init(network, broker);
                assertThat(begin(network, broker, again.producerId(), again.producerEpoch()))
                        .isEqualTo(Errors.NONE);
                assertThatThrownBy(() -> call.commit(
                                TID, p.producerId(), p.producerEpoch(), -1, GROUP, null, -1, offsets, 30_000))
                        .isInstanceOf(StellflowException.class)
                        .satisfies(e -> assertThat(((StellflowException) e).errorCode())
                                .isEqualTo(Errors.INVALID_PRODUCER_EPOCH));
            }
        }
    }
}
