package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.testsupport.IntegrationTest;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * acks=-1 on a single combined node (one broker, one replica per partition): the ISR is the broker alone, so the HW moves with
 * the append and acks=-1 is answered at once; with {@code min.insync.replicas=2} every acks=-1
 * Produce is refused before the append (NOT_ENOUGH_REPLICAS in v1, 7 in v0) while acks=1 works.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class AcksAllSingleNodeTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    private static ProduceResponse.PartitionResponse produce(RawClient client, short version, short acks)
            throws Exception {
        int correlationId = Requests.nextCorrelationId();
        client.send(
                RequestHeader.of(ApiKeys.PRODUCE, version, correlationId, "test"),
                Requests.produce("t", 0, Requests.batch(2, 1_000L), acks));
        RawClient.Response r = client.receive();
        assertThat(r.correlationId()).isEqualTo(correlationId);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return ProduceResponse.read(r.body()).responses().get(0).partitions().get(0);
    }

    @Test
    void acksAllIsAnsweredAtOnceWhenTheLeaderIsTheWholeIsr() throws Exception {
        StellflowServer server = NODES.start(transport);
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "t", 1);
            for (short version = 0; version <= 1; version++) {
                ProduceResponse.PartitionResponse r = produce(client, version, (short) -1);
                assertThat(r.errorCode()).isEqualTo(Errors.NONE);
                assertThat(r.baseOffset()).isEqualTo(2L * version);
            }
            assertThat(TestBroker.partition(server, "t", 0).highWatermark()).isEqualTo(4);
        }
    }

    @Test
    void minInsyncReplicasAboveOneRefusesAcksAllBeforeTheAppend() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("min.insync.replicas", "2");
        StellflowServer server = NODES.start(props);
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "t", 1);
            assertThat(produce(client, (short) 1, (short) -1).errorCode()).isEqualTo(Errors.NOT_ENOUGH_REPLICAS);
            assertThat(produce(client, (short) 0, (short) -1).errorCode()).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
            assertThat(TestBroker.partition(server, "t", 0).logEndOffset()).isZero();
            assertThat(produce(client, (short) 1, (short) 1).errorCode()).isEqualTo(Errors.NONE);
            assertThat(TestBroker.partition(server, "t", 0).logEndOffset()).isEqualTo(2);
        }
    }
}
