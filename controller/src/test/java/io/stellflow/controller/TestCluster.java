package io.stellflow.controller;

import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.Endpoint;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/** In-process controllers on 127.0.0.1 with pre-allocated ports, for tests. */
public final class TestCluster implements AutoCloseable {
    final List<ControllerConfig> configs = new ArrayList<>();
    final ControllerServer[] servers;

    TestCluster(Path dir, int n, Properties extra) throws IOException {
        int[] raft = LoopbackPorts.pick(n);
        int[] rpc = LoopbackPorts.pick(n);
        String voters = "";
        for (int i = 0; i < n; i++) {
            voters += (i == 0 ? "" : ",") + (i + 1) + "@127.0.0.1:" + raft[i];
        }
        servers = new ControllerServer[n];
        for (int i = 0; i < n; i++) {
            Properties p = new Properties();
            p.putAll(extra);
            p.setProperty("node.id", String.valueOf(i + 1));
            p.setProperty("controller.quorum.voters", voters);
            p.setProperty("controller.listener", "127.0.0.1:" + rpc[i]);
            p.setProperty("metadata.log.dir", dir.resolve("c" + (i + 1)).toString());
            configs.add(ControllerConfig.fromProperties(p));
        }
    }

    TestCluster startAll() throws IOException {
        for (int i = 0; i < servers.length; i++) {
            start(i);
        }
        return this;
    }

    void start(int i) throws IOException {
        servers[i] = ControllerServer.start(configs.get(i));
    }

    void stop(int i) {
        if (servers[i] != null) {
            servers[i].close();
            servers[i] = null;
        }
    }

    public String bootstrap() {
        return configs.stream()
                .map(c -> c.listenerHost() + ":" + c.listenerPort())
                .collect(Collectors.joining(","));
    }

    ControllerClient client(Duration timeout) {
        return ControllerClient.builder(bootstrap())
                .requestTimeout(timeout)
                .attemptTimeout(Duration.ofSeconds(7))
                .build();
    }

    int activeIndex() {
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] != null && servers[i].isActive()) {
                return i;
            }
        }
        return -1;
    }

    int awaitActive(Duration timeout) throws InterruptedException {
        awaitTrue(() -> activeIndex() >= 0, timeout, "an active controller");
        return activeIndex();
    }

    static void awaitTrue(BooleanSupplier cond, Duration timeout, String what) throws InterruptedException {
        Wait.until(timeout, cond, what);
    }

    /** A test-driven broker: registers, then heartbeats when told to. */
    static final class FakeBroker {
        final int id;
        final String rack;
        long epoch;

        FakeBroker(int id, String rack) {
            this.id = id;
            this.rack = rack;
        }

        void register(ControllerClient c) {
            RegisterBrokerResponse r = c.registerBroker(RegisterBrokerRequest.newBuilder()
                    .setBrokerId(id)
                    .setIncarnationId(MetadataRecords.uuid(UUID.randomUUID()))
                    .addListeners(Endpoint.newBuilder()
                            .setName("PLAINTEXT")
                            .setHost("127.0.0.1")
                            .setPort(9000 + id))
                    .setRack(rack)
                    .build());
            if (r.getError() != ErrorCode.NONE) {
                throw new AssertionError("register " + id + ": " + r.getError() + " " + r.getErrorMessage());
            }
            epoch = r.getBrokerEpoch();
        }

        BrokerHeartbeatResponse heartbeat(ControllerClient c, long metadataOffset) {
            return c.brokerHeartbeat(BrokerHeartbeatRequest.newBuilder()
                    .setBrokerId(id)
                    .setBrokerEpoch(epoch)
                    .setMetadataOffset(metadataOffset)
                    .build());
        }

        /** Registers and heartbeats (claiming to be caught up) until unfenced. */
        void registerAndUnfence(ControllerClient c) throws InterruptedException {
            register(c);
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (heartbeat(c, Long.MAX_VALUE).getFenced()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("broker " + id + " stayed fenced");
                }
                Thread.sleep(20);
            }
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < servers.length; i++) {
            stop(i);
        }
    }
}
