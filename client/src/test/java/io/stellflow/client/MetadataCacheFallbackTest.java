package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link MetadataCache#sendToAnyBroker}: an address that refuses the connection is passed over for
 * the next candidate, among the bootstrap servers and among the brokers of a Metadata answer alike;
 * only when none can be connected to does the call fail, naming every address; an answer (an error
 * code included) is never sent on to another broker. Ports 1 and 2 of 127.0.0.1 refuse connections
 * (nothing may listen there without root). Each case is repeated, so a pass cannot come from the
 * random first pick landing on the live broker.
 */
class MetadataCacheFallbackTest {
    private static final String DEAD_1 = "127.0.0.1:1";
    private static final String DEAD_2 = "127.0.0.1:2";
    /** Picks per case: a single random pick hits the live one of three every time with odds 3^-9. */
    private static final int ROUNDS = 9;

    private static NetworkClient client(String bootstrap) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        p.setProperty("socket.connection.setup.timeout.ms", "2000");
        return new NetworkClient(ClientConfig.from(p, "test"));
    }

    @Test
    void refreshReachesTheLiveBootstrapServerWhereverItIsInTheList() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("orders", 2);
            List<String> lists = List.of(
                    String.join(",", broker.bootstrap(), DEAD_1, DEAD_2),
                    String.join(",", DEAD_1, broker.bootstrap(), DEAD_2),
                    String.join(",", DEAD_1, DEAD_2, broker.bootstrap()));
            for (String bootstrap : lists) {
                for (int i = 0; i < ROUNDS; i++) {
                    // A fresh client and cache each time: before its first answer a cache asks the bootstrap list.
                    try (NetworkClient network = client(bootstrap)) {
                        MetadataCache cache = new MetadataCache(network);
                        assertThat(cache.refresh(List.of("orders")).get(10, TimeUnit.SECONDS))
                                .as(bootstrap)
                                .containsKey("orders");
                        assertThat(cache.leader(new TopicPartition("orders", 1)))
                                .isEqualTo(HostPort.parse(broker.bootstrap()));
                    }
                }
            }
            assertThat(broker.metadataRequests.get()).isEqualTo(lists.size() * ROUNDS);
        }
    }

    @Test
    void refreshPassesOverKnownBrokersThatRefuseTheConnection() throws Exception {
        try (FakeBroker broker = new FakeBroker();
                NetworkClient network = client(broker.bootstrap())) {
            broker.otherBrokers = List.of(HostPort.parse(DEAD_1), HostPort.parse(DEAD_2));
            MetadataCache cache = new MetadataCache(network);
            cache.refresh(List.of()).get(10, TimeUnit.SECONDS);
            assertThat(cache.brokers()).hasSize(3); // now the candidates: two of them dead
            for (int i = 0; i < ROUNDS; i++) {
                cache.refresh(List.of()).get(10, TimeUnit.SECONDS);
            }
            assertThat(broker.metadataRequests.get()).isEqualTo(1 + ROUNDS);
        }
    }

    @Test
    void whenNoCandidateCanBeConnectedToTheErrorNamesEachOnceAndIsRetriable() {
        try (NetworkClient network = client(String.join(",", DEAD_1, DEAD_2))) {
            MetadataCache cache = new MetadataCache(network);
            assertThatThrownBy(() -> cache.refresh(List.of()).get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOfSatisfying(StellflowException.class, e -> {
                        assertThat(e.errorCode()).isEqualTo(StellflowException.NETWORK_ERROR);
                        assertThat(e.retriable()).isTrue();
                        assertThat(e.getMessage())
                                .startsWith("no broker reachable, tried ")
                                .containsOnlyOnce("cannot connect to " + DEAD_1)
                                .containsOnlyOnce("cannot connect to " + DEAD_2);
                    });
        }
    }

    @Test
    void oneBootstrapServerFailsWithItsOwnConnectError() {
        try (NetworkClient network = client(DEAD_1)) {
            MetadataCache cache = new MetadataCache(network);
            assertThatThrownBy(() -> cache.refresh(List.of()).get(10, TimeUnit.SECONDS))
                    .cause()
                    .hasMessageStartingWith("cannot connect to " + DEAD_1);
        }
    }

    @Test
    void anAnswerIsTheResultEvenAnErrorOneNoOtherBrokerIsAsked() throws Exception {
        try (FakeBroker a = new FakeBroker();
                FakeBroker b = new FakeBroker();
                NetworkClient network = client(String.join(",", a.bootstrap(), b.bootstrap(), DEAD_1))) {
            MetadataCache cache = new MetadataCache(network);
            for (int i = 0; i < ROUNDS; i++) {
                List<HostPort> asked = new ArrayList<>();
                CompletableFuture<Integer> f = cache.sendToAnyBroker(to -> {
                    synchronized (asked) {
                        asked.add(to);
                    }
                    // OffsetCommit (5) is not offered by the fake brokers: UNSUPPORTED_VERSION after connecting.
                    return network.send(to, (short) 5, out -> {}, body -> 0);
                });
                assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS))
                        .cause()
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION));
                synchronized (asked) {
                    // At most the dead one, then exactly one live broker that answered.
                    assertThat(asked).hasSizeBetween(1, 2);
                    assertThat(asked.getLast()).isNotEqualTo(HostPort.parse(DEAD_1));
                    if (asked.size() == 2) {
                        assertThat(asked.getFirst()).isEqualTo(HostPort.parse(DEAD_1));
                    }
                }
            }
        }
    }

    @Test
    void theCandidatesAreEveryAddressOnceStartingAnywhere() {
        try (NetworkClient network = client(String.join(",", DEAD_1, DEAD_2, "127.0.0.1:3"))) {
            MetadataCache cache = new MetadataCache(network);
            AtomicInteger firstIsDead1 = new AtomicInteger();
            for (int i = 0; i < 300; i++) {
                List<HostPort> order = cache.candidates();
                assertThat(order)
                        .containsExactlyInAnyOrderElementsOf(network.config().bootstrapServers());
                int start = network.config().bootstrapServers().indexOf(order.get(0));
                for (int k = 0; k < order.size(); k++) {
                    assertThat(order.get(k))
                            .isEqualTo(network.config().bootstrapServers().get((start + k) % 3));
                }
                if (order.get(0).equals(HostPort.parse(DEAD_1))) {
                    firstIsDead1.incrementAndGet();
                }
            }
            // Spread over the list, not always the first entry (300 picks of 3: expected 100).
            assertThat(firstIsDead1.get()).isBetween(1, 299);
        }
    }
}
