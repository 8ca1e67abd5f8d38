package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NetworkClientTest {

    @Test
    void pipelinedRequestsAreMatchedToResponsesByCorrelationIdEvenWhenAnsweredInReverse() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            for (int i = 0; i < 8; i++) {
                broker.createTopic("t" + i, 1);
            }
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            try (NetworkClient client = new NetworkClient(ClientConfig.from(p, "test"))) {
                HostPort addr = HostPort.parse(broker.bootstrap());
                // Warm the connection so ApiVersions is not part of the held group.
                client.send(
                                addr,
                                ApiKeys.METADATA,
                                new MetadataRequest(List.of(), false, false, false)::write,
                                MetadataResponse::read)
                        .get(5, TimeUnit.SECONDS);
                broker.holdAndReverse(8);
                List<CompletableFuture<MetadataResponse>> futures = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    MetadataRequest req = new MetadataRequest(List.of("t" + i), false, false, false);
                    futures.add(client.send(addr, ApiKeys.METADATA, req::write, MetadataResponse::read));
                }
                for (int i = 0; i < 8; i++) {
                    MetadataResponse r = futures.get(i).get(5, TimeUnit.SECONDS);
                    assertThat(r.topics()).hasSize(1);
                    assertThat(r.topics().get(0).topic()).isEqualTo("t" + i);
                }
                assertThat(client.apiVersions(addr))
                        .extracting(r -> r.apiKey())
                        .contains(ApiKeys.PRODUCE, ApiKeys.FETCH);
                // All nine requests after ApiVersions went over one connection with distinct ids.
                assertThat(broker.correlationIds).doesNotHaveDuplicates().hasSize(10);
            }
        }
    }

    @Test
    void requestToAClosedPortFailsWithARetriableNetworkError() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:1");
        try (NetworkClient client = new NetworkClient(ClientConfig.from(p, "test"))) {
            CompletableFuture<MetadataResponse> f = client.send(
                    HostPort.parse("127.0.0.1:1"),
                    ApiKeys.METADATA,
                    new MetadataRequest(List.of(), false, false, false)::write,
                    MetadataResponse::read);
            assertThat(f)
                    .failsWithin(5, TimeUnit.SECONDS)
                    .withThrowableThat()
                    .havingRootCause()
                    .isNotNull();
            assertThat(f.handle((r, e) -> e.getCause()).join())
                    .isInstanceOfSatisfying(
                            StellflowException.class,
                            e -> assertThat(e.retriable()).isTrue());
        }
    }

    @Test
    void apiTheBrokerDidNotAdvertiseFailsLocallyWithUnsupportedVersion() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            try (NetworkClient client = new NetworkClient(ClientConfig.from(p, "test"))) {
                HostPort addr = HostPort.parse(broker.bootstrap());
                // OffsetCommit (5) is not in the fake broker's ApiVersions answer.
                CompletableFuture<Integer> f = client.send(addr, (short) 5, out -> {}, body -> 0);
                assertThat(f.handle((r, e) -> e.getCause()).get(5, TimeUnit.SECONDS))
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode())
                                        .isEqualTo(io.stellflow.protocol.Errors.UNSUPPORTED_VERSION));
                assertThat(broker.correlationIds).hasSize(1); // only ApiVersions reached the broker
            }
        }
    }
}
