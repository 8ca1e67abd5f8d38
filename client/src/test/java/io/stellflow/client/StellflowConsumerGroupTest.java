package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link StellflowConsumer} as a group member: records from {@link FakeBroker}, the group from an
 * {@link InMemoryCoordinator} (the membership logic itself is {@link ConsumerMembershipTest}'s).
 */
class StellflowConsumerGroupTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);

    private static FakeBroker brokerWithFiveRecords() throws InterruptedException {
        FakeBroker broker = new FakeBroker();
        broker.createTopic("t", 1);
        ByteBuf buf = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(buf, 1000L);
        for (int i = 0; i < 5; i++) {
            b.append(1000L + i, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        broker.append(TP, buf);
        return broker;
    }

    private static StellflowConsumer consumer(FakeBroker broker, InMemoryCoordinator coordinator, String... extra) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        p.setProperty("group.id", "g");
        for (int i = 0; i < extra.length; i += 2) {
            p.setProperty(extra[i], extra[i + 1]);
        }
        return new StellflowConsumer(ConsumerConfig.from(p), null, coordinator);
    }

    private static List<Long> pollOffsets(StellflowConsumer c, int n) {
        List<Long> out = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (out.size() < n && System.nanoTime() < deadline) {
            c.poll(Duration.ofMillis(100)).forEach(r -> out.add(r.offset()));
        }
        return out;
    }

    @Test
    void withoutACommittedOffsetEarliestReadsFromTheStartAndLatestFromTheEnd() throws Exception {
        try (FakeBroker broker = brokerWithFiveRecords()) {
            InMemoryCoordinator coordinator = new InMemoryCoordinator(Map.of("t", 1));
            try (StellflowConsumer c = consumer(broker, coordinator, "auto.offset.reset", "earliest")) {
                c.subscribe(List.of("t"));
                assertThat(pollOffsets(c, 5)).containsExactly(0L, 1L, 2L, 3L, 4L);
                assertThat(c.assignment()).containsExactly(TP);
            }
            try (StellflowConsumer c =
                    consumer(broker, new InMemoryCoordinator(Map.of("t", 1)), "auto.offset.reset", "latest")) {
                c.subscribe(List.of("t"));
                c.poll(Duration.ofMillis(300));
                assertThat(c.assignment()).containsExactly(TP);
                assertThat(c.position(TP)).isEqualTo(5);
            }
        }
    }

    @Test
    void aCommittedOffsetWinsOverAutoOffsetReset() throws Exception {
        try (FakeBroker broker = brokerWithFiveRecords()) {
            InMemoryCoordinator coordinator = new InMemoryCoordinator(Map.of("t", 1));
            coordinator.committed.put(TP, 3L);
            try (StellflowConsumer c = consumer(broker, coordinator, "auto.offset.reset", "none")) {
                c.subscribe(List.of("t"));
                assertThat(pollOffsets(c, 2)).containsExactly(3L, 4L);
            }
        }
    }

    @Test
    void noneWithoutACommittedOffsetFailsPollNamingTheGroupAndPartition() throws Exception {
        try (FakeBroker broker = brokerWithFiveRecords()) {
            InMemoryCoordinator coordinator = new InMemoryCoordinator(Map.of("t", 1));
            try (StellflowConsumer c = consumer(broker, coordinator, "auto.offset.reset", "none")) {
                c.subscribe(List.of("t"));
                assertThatThrownBy(() -> {
                            for (int i = 0; i < 50; i++) {
                                c.poll(Duration.ofMillis(100));
                            }
                        })
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE))
                        .hasMessageContaining("group g has no committed offset for t-0")
                        .hasMessageContaining("auto.offset.reset=none");
                assertThat(coordinator.commits).isEmpty(); // nothing consumed, nothing committed
            }
        }
    }

    @Test
    void commitSyncCommittedAndCloseCommitThePositionsAndLeaveTheGroup() throws Exception {
        try (FakeBroker broker = brokerWithFiveRecords()) {
            InMemoryCoordinator coordinator = new InMemoryCoordinator(Map.of("t", 1));
            List<String> calls = new ArrayList<>();
            StellflowConsumer c = consumer(broker, coordinator, "auto.offset.reset", "earliest");
            try {
                c.subscribe(List.of("t"), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        calls.add("revoked " + partitions + " at " + c.position(TP));
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        calls.add("assigned " + partitions);
                    }
                });
                assertThat(pollOffsets(c, 3)).startsWith(0L, 1L, 2L);
                c.seek(TP, 2);
                c.commitSync();
                assertThat(c.committed(Set.of(TP))).containsEntry(TP, 2L);
                c.commitSync(Map.of(TP, 4L));
                assertThat(c.committed(Set.of(TP))).containsEntry(TP, 4L);
                assertThatThrownBy(() -> c.assign(List.of(TP))).isInstanceOf(IllegalStateException.class);
            } finally {
                c.close();
            }
            assertThat(calls).containsExactly("assigned [t-0]", "revoked [t-0] at 2");
            // The leave commit (auto commit) covered the position, then the leave heartbeat went out.
            assertThat(coordinator.committed).containsEntry(TP, 2L);
            assertThat(coordinator.heartbeats.getLast().memberEpoch()).isEqualTo(-1);
        }
    }

    @Test
    void aListenerThatCommitsInOnPartitionsRevokedIsCalledOnceAndItsCommitLands() throws Exception {
        // commitSync inside onPartitionsRevoked drives the member's poll; that poll used to run the
        // revocation step again, calling the listener again, until the stack overflowed.
        try (FakeBroker broker = brokerWithFiveRecords()) {
            InMemoryCoordinator coordinator = new InMemoryCoordinator(Map.of("t", 1));
            List<String> calls = new ArrayList<>();
            StellflowConsumer c =
                    consumer(broker, coordinator, "auto.offset.reset", "earliest", "enable.auto.commit", "false");
            try {
                c.subscribe(List.of("t"), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        calls.add("revoked " + partitions);
                        c.commitSync();
                        calls.add("committed " + c.committed(Set.of(TP)));
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        calls.add("assigned " + partitions);
                    }
                });
                assertThat(pollOffsets(c, 5)).containsExactly(0L, 1L, 2L, 3L, 4L);
            } finally {
                c.close();
            }
            assertThat(calls).containsExactly("assigned [t-0]", "revoked [t-0]", "committed {t-0=5}");
            assertThat(coordinator.commits).containsExactly(Map.of(TP, 5L));
            assertThat(coordinator.heartbeats.getLast().memberEpoch()).isEqualTo(-1);
        }
    }

    @Test
    void groupCallsWithoutGroupIdAreRefusedClearly() throws Exception {
        try (FakeBroker broker = brokerWithFiveRecords()) {
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            try (StellflowConsumer c = new StellflowConsumer(p)) {
                assertThatThrownBy(() -> c.subscribe(List.of("t"))).hasMessageContaining("group.id");
                assertThatThrownBy(c::commitSync).hasMessageContaining("group.id");
            }
            p.setProperty("enable.auto.commit", "true");
            assertThatThrownBy(() -> new StellflowConsumer(p)).hasMessageContaining("needs group.id");
        }
    }
}
