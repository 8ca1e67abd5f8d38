package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stellflow.broker.network.Transport;
import io.stellflow.broker.network.TransportType;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Long-poll Fetch (decision 9.e of {@code docs/spec/wire-protocol.md}) on every transport: one node
 * per transport, each test with a topic of its own, named after it.
 */
@IntegrationTest
class LongPollTest {
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    StellflowServer server;
    String t;

    @BeforeEach
    void name(TestInfo test) {
        t = test.getTestMethod().orElseThrow().getName();
    }

    private RawClient start(String transport) throws Exception {
        assumeTrue(Transport.isAvailable(TransportType.parse("transport", transport)), transport + " unavailable");
        server = BROKERS.get(transport);
        RawClient client = new RawClient(server.port());
        Requests.createTopic(client, t, 1);
        return client;
    }

    private Partition partition() {
        return TestBroker.partition(server, t, 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void fetchAtTheEndIsAnsweredWhenAnotherClientProduces(String transport) throws Exception {
        try (RawClient consumer = start(transport);
                RawClient producer = new RawClient(server.port())) {
            Requests.produceOne(producer, t, 0, Requests.batch(1, 1));
            long startNs = System.nanoTime();
            consumer.send(ApiKeys.FETCH, 500, Requests.fetch(t, 0, 1, 2000));
            Thread.sleep(200);
            assertThat(partition().listenerCount()).isEqualTo(1);
            Requests.produceOne(producer, t, 0, Requests.g2());
            RawClient.Response r = consumer.receive();
            long elapsedMs = (System.nanoTime() - startNs) / 1_000_000;
            assertThat(r.correlationId()).isEqualTo(500);
            PartitionData p =
                    FetchResponse.read(r.body()).responses().get(0).partitions().get(0);
            assertThat(p.errorCode()).isEqualTo(Errors.NONE);
            List<DecodedRecord> records = RecordBatchReader.decode(p.records(), 1);
            assertThat(records).extracting(DecodedRecord::offset).containsExactly(1L);
            assertThat(elapsedMs).isLessThan(1900);
            assertThat(partition().listenerCount()).isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void fetchWithoutDataIsAnsweredEmptyAfterMaxWait(String transport) throws Exception {
        try (RawClient consumer = start(transport)) {
            long startNs = System.nanoTime();
            PartitionData p = Requests.fetchOne(consumer, Requests.fetch(t, 0, 0, 300));
            long elapsedMs = (System.nanoTime() - startNs) / 1_000_000;
            assertThat(p.errorCode()).isEqualTo(Errors.NONE);
            assertThat(p.records().readableBytes()).isZero();
            assertThat(elapsedMs).isBetween(250L, 5000L);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void aParkedFetchDoesNotHoldBackLaterResponsesOnTheConnection(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            client.send(ApiKeys.FETCH, 1, Requests.fetch(t, 0, 0, 1500));
            client.send(ApiKeys.API_VERSIONS, 2, new ApiVersionsRequest(null, null, List.of()));
            client.send(ApiKeys.PRODUCE, 3, Requests.produce(t, 0, Requests.g2()));
            assertThat(client.receive().correlationId()).isEqualTo(2);
            // The produce wakes the parked fetch; both answers arrive, in either order.
            RawClient.Response a = client.receive();
            RawClient.Response b = client.receive();
            assertThat(List.of(a.correlationId(), b.correlationId())).containsExactlyInAnyOrder(1, 3);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio"})
    void closingTheConnectionDropsTheParkedFetch(String transport) throws Exception {
        RawClient client = start(transport);
        client.send(ApiKeys.FETCH, 1, Requests.fetch(t, 0, 0, 30_000));
        Wait.until(Duration.ofSeconds(5), () -> partition().listenerCount() != 0, "the Fetch parked");
        assertThat(partition().listenerCount()).isEqualTo(1);
        client.close();
        Wait.until(Duration.ofSeconds(5), () -> partition().listenerCount() == 0, "the parked Fetch dropped");
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio"})
    void minBytesZeroOrMaxWaitZeroAnswerAtOnce(String transport) throws Exception {
        try (RawClient client = start(transport)) {
            long startNs = System.nanoTime();
            Requests.fetchOne(client, Requests.fetch(t, 0, 0, 0));
            io.stellflow.protocol.message.FetchRequest minBytesZero = new io.stellflow.protocol.message.FetchRequest(
                    -1, 5000, 0, 100, (byte) 0, 0, Requests.fetch(t, 0, 0, 0).topicPartitions());
            Requests.fetchOne(client, minBytesZero);
            assertThat((System.nanoTime() - startNs) / 1_000_000).isLessThan(2000);
        }
    }
}
