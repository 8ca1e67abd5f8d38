package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.CreateTopicResponse.CreateTopicPartition;
import io.stellflow.testsupport.IntegrationTest;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A single node on its embedded controller (the README's default) opens its data port before it has
 * registered and been unfenced. A CreateTopic sent as soon as the port accepts (what scripts that
 * wait for the port do) waits for the broker to join instead of being refused with "replication
 * factor 1 must be in 1..0".
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class CreateTopicDuringStartTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @TempDir
    Path dir;

    private CompletableFuture<StellflowServer> starting;

    @AfterEach
    void stop() throws Exception {
        if (starting != null) {
            starting.get(60, TimeUnit.SECONDS).close();
        }
    }

    @Test
    void createTopicRightAfterThePortOpensSucceeds() throws Exception {
        // The data port, and the next two for the embedded controller's Raft and gRPC ports.
        int[] ports;
        do {
            ports = LoopbackPorts.pick(3); // consecutive unless one was in use
        } while (ports[2] != ports[0] + 2);
        int port = ports[0];
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("metrics.port", "0");
        TestTransports.assumeSelected(transport);
        p.setProperty("transport", transport);
        BrokerConfig config = BrokerConfig.fromProperties(p);
        starting = CompletableFuture.supplyAsync(() -> {
            try {
                return StellflowServer.start(config);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress("127.0.0.1", port), 200);
                break;
            } catch (java.io.IOException notYet) {
                assertThat(System.nanoTime()).as("port open within 60 s").isLessThan(deadline);
                assertThat(starting).as("the broker is still starting").isNotCompletedExceptionally();
                Thread.sleep(5);
            }
        }
        try (RawClient client = new RawClient(port)) {
            RawClient.Response r =
                    client.call(ApiKeys.CREATE_TOPIC, Requests.nextCorrelationId(), CreateTopicRequest.of("early", 1));
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            assertThat(CreateTopicResponse.read(r.body()).partitions())
                    .containsExactly(new CreateTopicPartition(0, Errors.NONE, 0));
        }
    }
}
