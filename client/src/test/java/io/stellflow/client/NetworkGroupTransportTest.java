package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The consumer's FindCoordinator ({@link NetworkGroupTransport#findCoordinator}), the same lookup the
 * admin client uses ({@code AdminGroupsTest}): the key sent, the address returned, a refusal as an
 * exception with the code and the broker asked.
 */
class NetworkGroupTransportTest {
    private final List<String> keys = new CopyOnWriteArrayList<>();
    private final ArrayDeque<Short> errors = new ArrayDeque<>();

    private FakeBroker broker() throws InterruptedException {
        FakeBroker b = new FakeBroker();
        b.extraApiVersions = Map.of(ApiKeys.FIND_COORDINATOR, (short) 0);
        b.extraApis = (h, body) -> {
            keys.add(FindCoordinatorRequest.read(body).key());
            Short err = errors.poll();
            return (err != null
                            ? FindCoordinatorResponse.error(err)
                            : new FindCoordinatorResponse(Errors.NONE, 3, "127.0.0.9", 9093))::write;
        };
        return b;
    }

    @Test
    void theConsumersLookupAnswersTheCoordinatorOrTheRefusal() throws Exception {
        try (FakeBroker b = broker()) {
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", b.bootstrap());
            try (NetworkClient network = new NetworkClient(ClientConfig.from(p, "test"))) {
                NetworkGroupTransport transport = new NetworkGroupTransport(network, new MetadataCache(network));
                assertThat(transport.findCoordinator("orders").get(10, TimeUnit.SECONDS))
                        .isEqualTo(new HostPort("127.0.0.9", 9093));

                errors.add(Errors.COORDINATOR_NOT_AVAILABLE);
                assertThatThrownBy(() -> transport.findCoordinator("billing").get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause()
                        .isInstanceOfSatisfying(StellflowException.class, e -> {
                            assertThat(e.errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
                            assertThat(e.getMessage()).contains("group billing at " + b.bootstrap());
                        });
                assertThat(keys).containsExactly("orders", "billing");
            }
        }
    }

    @Test
    void theLookupPassesOverBootstrapServersThatRefuseTheConnectionButNotARefusal() throws Exception {
        try (FakeBroker b = broker()) {
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", String.join(",", "127.0.0.1:1", "127.0.0.1:2", b.bootstrap()));
            try (NetworkClient network = new NetworkClient(ClientConfig.from(p, "test"))) {
                NetworkGroupTransport transport = new NetworkGroupTransport(network, new MetadataCache(network));
                // Nine lookups, each from a random first pick: all reach the one live server.
                for (int i = 0; i < 9; i++) {
                    assertThat(transport.findCoordinator("g" + i).get(10, TimeUnit.SECONDS))
                            .isEqualTo(new HostPort("127.0.0.9", 9093));
                }
                errors.add(Errors.COORDINATOR_NOT_AVAILABLE);
                assertThatThrownBy(() -> transport.findCoordinator("billing").get(10, TimeUnit.SECONDS))
                        .cause()
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE));
                assertThat(keys).hasSize(10).endsWith("billing"); // the refusal was not asked again elsewhere
            }
        }
    }
}
