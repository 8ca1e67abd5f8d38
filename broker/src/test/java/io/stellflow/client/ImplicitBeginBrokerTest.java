package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.protocol.Errors;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Implicit begin over the wire against a real broker (in the client's package to reach the
 * package-private calls): the broker's EndTransaction v2 is what {@link
 * TransactionCoordinatorCalls#beginsImplicitly} reports; a TxnOffsetCommit of sequence + 1 with no
 * BeginTransaction begins the transaction, whose End commits the offsets; an End of sequence + 1
 * with nothing sent completes it empty, and a late TxnOffsetCommit of that sequence is refused.
 */
@IntegrationTest
class ImplicitBeginBrokerTest {
    private static final String TID = "implicit-tx";
    private static final String GROUP = "etl";
    private static final TopicPartition P0 = new TopicPartition("in", 0);

    @TempDir
    Path dir;

    @Test
    void aTransactionBegunByItsOffsetCommitCommitsAndAnEmptyOneBlocksItsLateRegistration() throws Exception {
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(TxnBrokerProps.of(dir)))) {
            HostPort broker = new HostPort("127.0.0.1", server.port());
            Properties clientProps = new Properties();
            clientProps.setProperty("bootstrap.servers", broker.host() + ":" + broker.port());
            Properties producerProps = new Properties();
            producerProps.putAll(clientProps);
            producerProps.setProperty("transactional.id", TID);
            producerProps.setProperty("max.block.ms", "20000");
            try (StellflowAdmin admin = new StellflowAdmin(clientProps);
                    NetworkClient network = new NetworkClient(ClientConfig.from(clientProps, "implicit"))) {
                admin.createTopic("in", 1);
                MetadataCache metadata = new MetadataCache(network);
                TransactionCoordinatorCalls calls =
                        new TransactionCoordinatorCalls(network, metadata, ProducerConfig.from(producerProps));
                TxnOffsetCommitCall offsets = new TxnOffsetCommitCall(network, metadata);
                NetworkGroupTransport groups = new NetworkGroupTransport(network, metadata);

                ProducerTransactions.Answer init = calls.initProducerId(30_000);
                assertThat(init.errorCode()).isEqualTo(Errors.NONE);
                long pid = init.producerId();
                short epoch = init.epoch();
                assertThat(calls.beginsImplicitly()).as("before any End").isFalse();
                ProducerTransactions.Answer begin = calls.beginTransaction(pid, epoch);
                assertThat(begin.errorCode()).isEqualTo(Errors.NONE);
                long s = begin.transactionSequence();
                assertThat(calls.endTransaction(pid, epoch, true, s).errorCode())
                        .isEqualTo(Errors.NONE);
                assertThat(calls.beginsImplicitly())
                        .as("the broker answers End v2")
                        .isTrue();

                // Transaction s + 1: no Begin, its offset commit begins it at the coordinator.
                offsets.commit(TID, pid, epoch, s + 1, GROUP, null, -1, Map.of(P0, 10L), 30_000);
                assertThat(calls.endTransaction(pid, epoch, true, s + 1).errorCode())
                        .isEqualTo(Errors.NONE);
                HostPort coordinator = groups.findCoordinator(GROUP).join();
                Wait.until(
                        Duration.ofSeconds(10),
                        () -> groups.fetchOffsets(coordinator, GROUP, Set.of(P0))
                                        .join()
                                        .get(P0)
                                == 10L,
                        "the offsets of the implicitly begun transaction committed");

                // Transaction s + 2 ends before anything of it arrived: completed empty ...
                assertThat(calls.endTransaction(pid, epoch, false, s + 2).errorCode())
                        .isEqualTo(Errors.NONE);
                // ... so its late offset commit can neither begin nor join anything.
                assertThatThrownBy(
                                () -> offsets.commit(TID, pid, epoch, s + 2, GROUP, null, -1, Map.of(P0, 20L), 30_000))
                        .isInstanceOf(StellflowException.class)
                        .satisfies(e ->
                                assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE));
                assertThat(groups.fetchOffsets(coordinator, GROUP, Set.of(P0)).join())
                        .containsEntry(P0, 10L);
            }
        }
    }
}
