package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.FollowMetadataRequest;
import io.stellflow.controller.proto.MetadataEvent;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FollowMetadata holds back for a follower that reads slowly instead of buffering without bound. */
@IntegrationTest
class FollowMetadataFlowControlTest {
    private static final int TOPICS = 32;
    private static final int PARTITIONS_PER_TOPIC = 200;
    /** The follower's HTTP/2 window: what may be in flight towards it besides gRPC's 32 KiB send buffer. */
    private static final int FOLLOWER_WINDOW_BYTES = 16 * 1024;

    @TempDir
    Path dir;

    @Test
    void aSlowFollowerHoldsBackTheStreamAndStillGetsEveryDeltaInOrder() throws Exception {
        AtomicLong sent = new AtomicLong();
        ControllerMetrics counting = new ControllerMetrics() {
            @Override
            public void deltaBroadcast() {
                sent.incrementAndGet();
            }
        };
        Properties p = new Properties();
        p.setProperty("broker.session.timeout.ms", "600000"); // the fake broker does not heartbeat
        TestCluster one = new TestCluster(dir, 1, p);
        ControllerServer controller = ControllerServer.start(one.configs.get(0), counting);
        one.servers[0] = controller;
        ManagedChannel channel = NettyChannelBuilder.forTarget(controller.rpcEndpoint())
                .usePlaintext()
                .flowControlWindow(FOLLOWER_WINDOW_BYTES) // also turns off window auto-tuning
                .build();
        try (one;
                ControllerClient client = one.client(Duration.ofSeconds(30))) {
            new FakeBroker(1, "").registerAndUnfence(client);
            long from = controller.image().offset();

            // The follower: asks for one event at a time, and only when the test says so.
            BlockingQueue<Object> events = new LinkedBlockingQueue<>();
            ClientCall<FollowMetadataRequest, MetadataEvent> call =
                    channel.newCall(ControllerRpc.FOLLOW_METADATA, CallOptions.DEFAULT);
            call.start(
                    new ClientCall.Listener<>() {
                        @Override
                        public void onMessage(MetadataEvent message) {
                            events.add(message);
                        }

                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            events.add(status);
                        }
                    },
                    new Metadata());
            call.sendMessage(
                    FollowMetadataRequest.newBuilder().setFromOffset(from).build());
            call.halfClose();

            // TOPICS entries of ~PARTITIONS_PER_TOPIC partition records each while the follower reads
            // nothing at all.
            long sentBefore = sent.get();
            for (int i = 0; i < TOPICS; i++) {
                CreateTopicsResponse r = client.createTopics(CreateTopicsRequest.newBuilder()
                        .addTopics(CreatableTopic.newBuilder()
                                .setName("t" + i)
                                .setNumPartitions(PARTITIONS_PER_TOPIC)
                                .setReplicationFactor(1))
                        .build());
                assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
                assertThat(r.getTopics(0).getError()).as("t%d", i).isEqualTo(ErrorCode.NONE);
            }
            long target = controller.image().offset();
            Thread.sleep(1000); // time for the stream to push whatever it may
            long maxAhead = sent.get() - sentBefore;
            System.out.println("FOLLOW_METADATA_SENT_UNREAD " + maxAhead + " of " + (target - from)
                    + " entries after the follower read nothing");

            // Then the follower reads, one event at a time with a pause at first, up to the last entry.
            List<MetadataEvent> received = new ArrayList<>();
            int deltaBytes = 0;
            while (lastOffset(received, from) < target) {
                call.request(1);
                Object ev = events.poll(30, TimeUnit.SECONDS);
                assertThat(ev)
                        .as(
                                "event %d within 30 s (from %d, last received %d, target %d, sent %d)",
                                received.size() + 1, from, lastOffset(received, from), target, sent.get() - sentBefore)
                        .isInstanceOf(MetadataEvent.class);
                MetadataEvent e = (MetadataEvent) ev;
                received.add(e);
                deltaBytes = Math.max(deltaBytes, e.getSerializedSize());
                // Sent by the controller but not yet read by the follower.
                maxAhead = Math.max(maxAhead, sent.get() - sentBefore - received.size());
                if (received.size() < TOPICS / 4) {
                    Thread.sleep(50);
                }
            }
            call.cancel("done", null);

            // Without flow control the controller would have sent (nearly) all TOPICS entries ahead of
            // the slow reader. With it, at most the follower's window plus gRPC's 32 KiB send buffer
            // (and the one event that crossed it) may be ahead.
            long bound = (FOLLOWER_WINDOW_BYTES + 32 * 1024) / Math.max(1, deltaBytes) + 3;
            System.out.println("FOLLOW_METADATA_MAX_AHEAD " + maxAhead + " events of up to " + deltaBytes
                    + " bytes (bound " + bound + ", " + TOPICS + " entries)");
            assertThat(deltaBytes)
                    .as("entries are big enough for the window to matter")
                    .isGreaterThan(4000);
            assertThat(maxAhead).isLessThanOrEqualTo(bound).isLessThan(TOPICS / 2);

            // Nothing lost or reordered: one delta per topic, offsets strictly increasing.
            Set<String> topics = new HashSet<>();
            long last = from;
            for (MetadataEvent e : received) {
                assertThat(e.getEventCase()).isEqualTo(MetadataEvent.EventCase.DELTA);
                assertThat(e.getDelta().getIndex()).isGreaterThan(last);
                last = e.getDelta().getIndex();
                e.getDelta().getRecordsList().stream()
                        .filter(r -> r.hasTopic())
                        .map(r -> r.getTopic())
                        .map(TopicRecord::getName)
                        .forEach(topics::add);
            }
            assertThat(last).isEqualTo(controller.image().offset());
            assertThat(topics).hasSize(TOPICS);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static long lastOffset(List<MetadataEvent> received, long from) {
        return received.isEmpty() ? from : received.getLast().getDelta().getIndex();
    }
}
