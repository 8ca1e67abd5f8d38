package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Per-topic configs (given at creation through the controller, {@link TestBroker#createTopic})
 * through the running broker: time retention deletes old segments, compaction is visible through
 * Fetch, a null key on a compacted topic is INVALID_RECORD with nothing appended, and the topic config
 * survives a restart. One node per transport serves the tests without a restart or broker settings
 * of their own; every topic name is used once per node.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class TopicCleanupTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared(TopicCleanupTest::fastRetention);

    /** Nodes of the tests with a restart or broker settings of their own. */
    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    StellflowServer server;
    RawClient client;

    @BeforeEach
    void start() throws Exception {
        server = BROKERS.get(transport);
        client = new RawClient(server.port());
    }

    private static void fastRetention(Properties props) {
        props.setProperty("log.retention.check.interval.ms", "50");
    }

    private Properties props() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        fastRetention(props);
        return props;
    }

    /** Moves the test to a node of its own with {@code props} (its client too). */
    private void startOwn(Properties props) throws Exception {
        client.close();
        server = NODES.start(props);
        client = new RawClient(server.port());
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        Wait.until(Duration.ofSeconds(15), condition, what);
    }

    /** One single-record batch with a key (null allowed) and a ~200-byte value. */
    private static byte[] keyed(String key, String value, long timestampMs) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, timestampMs);
        byte[] v = (value + "-" + "x".repeat(200)).getBytes(StandardCharsets.UTF_8);
        b.append(timestampMs, key == null ? null : key.getBytes(StandardCharsets.UTF_8), v);
        b.close();
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    @Test
    void timeRetentionDeletesOldSegmentsThroughTheRunningBroker() throws Exception {
        assertThat(TestBroker.createTopic(
                        server,
                        "old",
                        1,
                        Map.of("segment.bytes", "1024", "retention.ms", "60000", "file.delete.delay.ms", "0")))
                .isEqualTo(ErrorCode.NONE);
        long anHourAgo = System.currentTimeMillis() - 3_600_000;
        for (int i = 0; i < 12; i++) {
            Requests.produceOne(client, "old", 0, keyed("k" + i, "v" + i, anHourAgo + i));
        }
        UnifiedLog log = TestBroker.partition(server, "old", 0).log();
        Path firstSegment = log.dir().resolve("00000000000000000000.log");
        // Everything but the active segment is an hour old, past retention.ms: the retention thread
        // deletes it, up to the high watermark (the log end offset on one node).
        await(() -> log.segmentCount() == 1, "only the active segment is left");
        long earliest = Requests.listOffsets(client, "old", 0, -1, -2, 1).offset();
        assertThat(earliest).isGreaterThan(0).isEqualTo(log.logStartOffset());
        assertThat(earliest).isLessThan(12);
        await(() -> !Files.exists(firstSegment), "the deleted segment's file is removed");
        List<DecodedRecord> rest = RecordBatchReader.decode(
                Requests.fetchOne(client, Requests.fetch("old", 0, earliest, 0)).records(), earliest);
        assertThat(rest).extracting(DecodedRecord::offset).first().isEqualTo(earliest);
        assertThat(rest).hasSize((int) (12 - earliest));
    }

    @Test
    void compactionIsVisibleThroughFetchAndKeepsTheLatestValuePerKeyAtItsOffset() throws Exception {
        Map<String, String> config =
                Map.of("cleanup.policy", "compact", "segment.bytes", "1024", "min.cleanable.dirty.ratio", "0.1");
        assertThat(TestBroker.createTopic(server, "state", 1, config)).isEqualTo(ErrorCode.NONE);
        Map<Long, String> produced = new HashMap<>();
        Map<String, Long> lastOffsetOfKey = new HashMap<>();
        long now = System.currentTimeMillis();
        for (int round = 0; round < 4; round++) {
            for (int k = 0; k < 4; k++) {
                String value = "r" + round + "k" + k;
                PartitionResponse r = Requests.produceOne(client, "state", 0, keyed("k" + k, value, now));
                assertThat(r.errorCode()).isEqualTo(Errors.NONE);
                produced.put(r.baseOffset(), value);
                lastOffsetOfKey.put("k" + k, r.baseOffset());
            }
        }
        await(
                () -> {
                    try {
                        return fetchAll("state").size() < 16;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                "compaction removed superseded records");
        List<DecodedRecord> records = fetchAll("state");
        long previous = -1;
        for (DecodedRecord r : records) {
            assertThat(r.offset()).isGreaterThan(previous); // original offsets, in order, with gaps
            previous = r.offset();
            String value = new String(r.value(), StandardCharsets.UTF_8);
            assertThat(value).startsWith(produced.get(r.offset()) + "-");
        }
        for (Map.Entry<String, Long> last : lastOffsetOfKey.entrySet()) {
            assertThat(records)
                    .filteredOn(r -> r.offset() == last.getValue())
                    .singleElement()
                    .satisfies(r -> assertThat(new String(r.key(), StandardCharsets.UTF_8))
                            .isEqualTo(last.getKey()));
        }
        assertThat(Requests.listOffsets(client, "state", 0, -1, -1, 1).offset()).isEqualTo(16);
    }

    private List<DecodedRecord> fetchAll(String topic) throws Exception {
        return RecordBatchReader.decode(
                Requests.fetchOne(client, Requests.fetch(topic, 0, 0, 0)).records(), 0);
    }

    @Test
    void aNullKeyOnACompactedTopicIsInvalidRecordAndNothingIsAppended() throws Exception {
        assertThat(TestBroker.createTopic(server, "keyed", 1, Map.of("cleanup.policy", "compact")))
                .isEqualTo(ErrorCode.NONE);
        long now = System.currentTimeMillis();
        assertThat(Requests.produceOne(client, "keyed", 0, keyed("a", "1", now)).errorCode())
                .isEqualTo(Errors.NONE);
        byte[] nullKey = keyed(null, "2", now);
        PartitionResponse rejected = Requests.produceOne(client, "keyed", 0, nullKey);
        assertThat(rejected.errorCode()).isEqualTo(Errors.INVALID_RECORD).isEqualTo((short) 14);
        assertThat(rejected.baseOffset()).isEqualTo(-1);
        PartitionResponse mixed =
                Requests.produceOne(client, "keyed", 0, Requests.concat(keyed("b", "3", now), nullKey));
        assertThat(mixed.errorCode()).isEqualTo(Errors.INVALID_RECORD);
        assertThat(TestBroker.partition(server, "keyed", 0).logEndOffset()).isEqualTo(1);
        assertThat(Requests.produceOne(client, "keyed", 0, keyed("c", "4", now)).baseOffset())
                .isEqualTo(1);
        // The same record set on a topic with the default cleanup.policy=delete is fine.
        Requests.createTopic(client, "plain", 1);
        assertThat(Requests.produceOne(client, "plain", 0, nullKey).errorCode()).isEqualTo(Errors.NONE);
    }

    @Test
    void topicConfigIsPersistedWithTheTopicAndBadConfigsAreRefused() throws Exception {
        startOwn(props());
        assertThat(TestBroker.createTopic(
                        server, "kept", 2, Map.of("cleanup.policy", "compact,delete", "retention.bytes", "4096")))
                .isEqualTo(ErrorCode.NONE);
        assertThat(TestBroker.createTopic(server, "bad", 1, Map.of("retention.hours", "1")))
                .isEqualTo(ErrorCode.INVALID_CONFIG);
        assertThat(TestBroker.topic(server, "bad")).isNull();
        server.close();
        startOwn(props());
        // The restarted broker applies the config of the controller's metadata to the reloaded log.
        assertThat(server.replicaManager().awaitImage(i -> TestBroker.partition(server, "kept", 1) != null, 10_000))
                .isNotNull();
        LogConfig config = TestBroker.partition(server, "kept", 1).log().config();
        assertThat(config.cleanupPolicy()).isEqualTo(LogConfig.CleanupPolicy.COMPACT_DELETE);
        assertThat(config.retentionBytes()).isEqualTo(4096);
        assertThat(Requests.produceOne(client, "kept", 1, keyed(null, "x", 1)).errorCode())
                .isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void aNullKeyOnACompactedTopicIsInvalidRecordWhenAppendingOnRequestThreadsToo() throws Exception {
        Properties props = props();
        props.setProperty("num.append.agents", "0");
        startOwn(props);
        assertThat(TestBroker.createTopic(server, "keyed", 1, Map.of("cleanup.policy", "compact")))
                .isEqualTo(ErrorCode.NONE);
        long now = System.currentTimeMillis();
        assertThat(Requests.produceOne(client, "keyed", 0, keyed(null, "1", now))
                        .errorCode())
                .isEqualTo(Errors.INVALID_RECORD);
        assertThat(Requests.produceOne(client, "keyed", 0, keyed("a", "2", now)).baseOffset())
                .isZero();
    }
}
