package io.stellflow.broker.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.ConsumerRebalanceListener;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our consumer as a group member against a real single-node broker (our group protocol:
 * ConsumerGroupHeartbeat, OffsetCommit v1 and OffsetFetch v1): two members split a topic's partitions
 * without overlap, the second join revokes from the first before the second gets them, commits are
 * where the next member of the group starts, and {@code auto.offset.reset=none} names the group.
 */
@IntegrationTest
class ConsumerGroupEndToEndTest {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 4;

    @TempDir
    Path dataDir;

    private StellflowServer start() throws Exception {
        Properties p = SingleBroker.props(dataDir);
        p.setProperty("offsets.topic.num.partitions", "3");
        p.setProperty("group.consumer.heartbeat.interval.ms", "200");
        p.setProperty("transport", "nio");
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    private static Properties member(StellflowServer server, String group, String... kv) {
        Properties p = SingleBroker.clientProps(server, kv);
        p.setProperty("group.id", group);
        p.putIfAbsent("auto.offset.reset", "earliest");
        return p;
    }

    private static void produce(StellflowServer server, int from, int count) throws Exception {
        try (StellflowProducer producer = new StellflowProducer(SingleBroker.clientProps(server, "acks", "-1"))) {
            for (int i = from; i < from + count; i++) {
                producer.send(new ProducerRecord(
                                TOPIC, i % PARTITIONS, null, Integer.toString(i).getBytes(StandardCharsets.UTF_8)))
                        .get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static int valueOf(ConsumerRecord r) {
        return Integer.parseInt(new String(r.value(), StandardCharsets.UTF_8));
    }

    /** Records the listener's calls, in order, as "revoked [..]" / "assigned [..]". */
    private static final class Calls implements ConsumerRebalanceListener {
        final List<String> calls = new CopyOnWriteArrayList<>();

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            calls.add("revoked " + partitions.size());
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            calls.add("assigned " + partitions.size());
        }
    }

    @Test
    void twoMembersSplitThePartitionsAndTheCommitsAreWhereTheNextMemberStarts() throws Exception {
        StellflowServer server = start();
        try {
            try (StellflowAdmin admin = new StellflowAdmin(SingleBroker.clientProps(server))) {
                admin.createTopic(TOPIC, PARTITIONS);
            }
            produce(server, 0, 200);
            Set<Integer> seen = new HashSet<>();
            Calls callsA = new Calls();
            try (StellflowConsumer a = new StellflowConsumer(member(server, "g1"));
                    StellflowConsumer b = new StellflowConsumer(member(server, "g1"))) {
                a.subscribe(List.of(TOPIC), callsA);
                Wait.until(
                        Duration.ofSeconds(30),
                        () -> {
                            a.poll(Duration.ofMillis(50)).forEach(r -> seen.add(valueOf(r)));
                            return a.assignment().size() == PARTITIONS;
                        },
                        "member a owns every partition");
                b.subscribe(List.of(TOPIC));
                Wait.until(
                        Duration.ofSeconds(30),
                        () -> {
                            a.poll(Duration.ofMillis(50)).forEach(r -> seen.add(valueOf(r)));
                            b.poll(Duration.ofMillis(50)).forEach(r -> seen.add(valueOf(r)));
                            return a.assignment().size() + b.assignment().size() == PARTITIONS
                                    && !a.assignment().isEmpty()
                                    && !b.assignment().isEmpty();
                        },
                        "the partitions split between a and b");
                Set<TopicPartition> overlap = new HashSet<>(a.assignment());
                overlap.retainAll(b.assignment());
                assertThat(overlap).isEmpty();
                assertThat(callsA.calls)
                        .startsWith("assigned 4")
                        .contains("revoked " + b.assignment().size());
                Wait.until(
                        Duration.ofSeconds(30),
                        () -> {
                            a.poll(Duration.ofMillis(50)).forEach(r -> seen.add(valueOf(r)));
                            b.poll(Duration.ofMillis(50)).forEach(r -> seen.add(valueOf(r)));
                            return seen.size() == 200;
                        },
                        "every record read by a member");
                a.commitSync();
                b.commitSync();
                Map<TopicPartition, Long> committed = new HashMap<>(a.committed(a.assignment()));
                committed.putAll(b.committed(b.assignment()));
                assertThat(committed.values()).containsOnly(50L);
            }

            // The group's next member starts at the commits: only the new records, not the old 200.
            produce(server, 200, 8);
            try (StellflowConsumer c = new StellflowConsumer(member(server, "g1"))) {
                c.subscribe(List.of(TOPIC));
                List<Integer> got = new ArrayList<>();
                Wait.until(
                        Duration.ofSeconds(30),
                        () -> {
                            c.poll(Duration.ofMillis(100)).forEach(r -> got.add(valueOf(r)));
                            return got.size() >= 8;
                        },
                        "the 8 new records");
                c.poll(Duration.ofMillis(300)).forEach(r -> got.add(valueOf(r)));
                assertThat(got).containsExactlyInAnyOrder(200, 201, 202, 203, 204, 205, 206, 207);
            }
        } finally {
            server.close();
        }
    }

    @Test
    void noneWithoutACommitFailsAndACommitFromOutsideTheGroupIsReadBack() throws Exception {
        StellflowServer server = start();
        try {
            try (StellflowAdmin admin = new StellflowAdmin(SingleBroker.clientProps(server))) {
                admin.createTopic(TOPIC, PARTITIONS);
            }
            produce(server, 0, 8);
            try (StellflowConsumer c = new StellflowConsumer(member(server, "g2", "auto.offset.reset", "none"))) {
                c.subscribe(List.of(TOPIC));
                assertThatThrownBy(() -> Wait.until(
                                Duration.ofSeconds(30),
                                () -> {
                                    c.poll(Duration.ofMillis(100));
                                    return false;
                                },
                                "a failing poll"))
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE))
                        .hasMessageContaining("group g2 has no committed offset");
            }
            // An assign-only consumer commits from outside the group (epoch -1); a member starts there.
            TopicPartition p0 = new TopicPartition(TOPIC, 0);
            try (StellflowConsumer tool = new StellflowConsumer(member(server, "g2", "enable.auto.commit", "false"))) {
                tool.assign(List.of(p0));
                tool.commitSync(Map.of(p0, 1L));
                assertThat(tool.committed(Set.of(p0))).containsEntry(p0, 1L);
            }
            try (StellflowConsumer c = new StellflowConsumer(member(server, "g2", "auto.offset.reset", "latest"))) {
                c.subscribe(List.of(TOPIC));
                List<ConsumerRecord> got = new ArrayList<>();
                Wait.until(
                        Duration.ofSeconds(30),
                        () -> {
                            got.addAll(c.poll(Duration.ofMillis(100)));
                            return c.assignment().size() == PARTITIONS;
                        },
                        "every partition assigned");
                got.addAll(c.poll(Duration.ofMillis(500)));
                // Partition 0 from the commit (offset 1, the record of value 4); the others from latest.
                assertThat(got)
                        .extracting(r -> r.partition() + "@" + r.offset())
                        .containsExactly("0@1");
                assertThat(valueOf(got.get(0))).isEqualTo(4);
                assertThat(c.position(new TopicPartition(TOPIC, 1))).isEqualTo(2L);
            }
        } finally {
            server.close();
        }
    }
}
