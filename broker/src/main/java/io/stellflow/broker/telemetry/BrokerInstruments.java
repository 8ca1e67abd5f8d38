package io.stellflow.broker.telemetry;

import static io.stellflow.server.common.telemetry.Instrument.counter;
import static io.stellflow.server.common.telemetry.Instrument.gauge;
import static io.stellflow.server.common.telemetry.Instrument.histogram;

import io.stellflow.server.common.telemetry.Instrument;
import java.util.List;

/**
 * The broker instruments of the metrics dictionary ({@code docs/spec/metrics.md}) that exist today,
 * with their exact names, units and attribute keys, and the ones that wait for their subsystem.
 *
 * <p>Registered now: "Broker: network and requests" (except throttling: no quotas yet), "Broker:
 * produce and fetch", "Broker: storage" and "Broker: replication" ({@link ReplicaTelemetry} behind the
 * {@link ReplicationMetrics} hooks); the "Controller" section is the controller module's {@code ControllerInstruments}.
 * "Broker: coordinators and quotas" except quotas. Deferred ({@link #DEFERRED}): quotas.
 *
 * <p>Thread-safety: constants only.
 */
public final class BrokerInstruments {
    private BrokerInstruments() {}

    // Broker: network and requests
    public static final Instrument REQUEST_COUNT =
            counter("stellflow.request.count", "{request}", "node.id", "api", "result");
    public static final Instrument REQUEST_LATENCY =
            histogram("stellflow.request.latency", "ms", "node.id", "api", "result");
    public static final Instrument REQUEST_QUEUE_DEPTH = gauge("stellflow.request.queue.depth", "{request}", "node.id");
    public static final Instrument RESPONSE_QUEUE_DEPTH =
            gauge("stellflow.response.queue.depth", "{response}", "node.id");
    public static final Instrument CONNECTION_COUNT = gauge("stellflow.connection.count", "{connection}", "node.id");
    public static final Instrument DECODE_ERROR_COUNT =
            counter("stellflow.request.decode.error.count", "{error}", "node.id", "api");

    // Broker: produce and fetch
    public static final Instrument PRODUCE_REQUEST_COUNT =
            counter("stellflow.produce.request.count", "{request}", "node.id", "result");
    public static final Instrument PRODUCE_BYTES = counter("stellflow.produce.bytes", "By", "node.id");
    public static final Instrument PRODUCE_RECORDS = counter("stellflow.produce.records", "{record}", "node.id");
    public static final Instrument PRODUCE_LATENCY = histogram("stellflow.produce.latency", "ms", "node.id", "result");
    public static final Instrument FETCH_REQUEST_COUNT =
            counter("stellflow.fetch.request.count", "{request}", "node.id", "result");
    public static final Instrument FETCH_BYTES = counter("stellflow.fetch.bytes", "By", "node.id");
    public static final Instrument FETCH_RECORDS = counter("stellflow.fetch.records", "{record}", "node.id");
    public static final Instrument FETCH_LATENCY = histogram("stellflow.fetch.latency", "ms", "node.id", "result");
    public static final Instrument LONG_POLL_HIT_COUNT =
            counter("stellflow.fetch.long_poll.hit.count", "{hit}", "node.id");
    public static final Instrument LONG_POLL_WAIT = histogram("stellflow.fetch.long_poll.wait", "ms", "node.id");

    // Broker: storage
    public static final Instrument LOG_APPEND_LATENCY =
            histogram("stellflow.log.append.latency", "ms", "node.id", "replica.role");
    public static final Instrument LOG_FLUSH_LATENCY = histogram("stellflow.log.flush.latency", "ms", "node.id");
    public static final Instrument SEGMENT_ROLL_COUNT =
            counter("stellflow.log.segment.roll.count", "{event}", "node.id");
    public static final Instrument SEGMENT_ACTIVE_SIZE = gauge("stellflow.log.segment.active.size", "By", "node.id");
    public static final Instrument LOG_RECOVERY_TIME = histogram("stellflow.log.recovery.time", "ms", "node.id");
    public static final Instrument OFFSET_COMMIT_COUNT =
            counter("stellflow.offset.commit.count", "{request}", "node.id", "result");
    public static final Instrument OFFSET_COMMIT_LATENCY =
            histogram("stellflow.offset.commit.latency", "ms", "node.id", "result");
    public static final Instrument COORDINATOR_LOAD_TIME =
            histogram("stellflow.coordinator.load.time", "ms", "node.id", "coordinator.type");

    // Broker: coordinators
    public static final Instrument COORDINATOR_GROUP_COUNT =
            gauge("stellflow.coordinator.group.count", "{group}", "node.id", "coordinator.type");
    /** Transactional ids of the {@code __transaction_state} partitions loaded here (docs/metrics-additions.md). */
    public static final Instrument COORDINATOR_TRANSACTIONAL_ID_COUNT =
            gauge("stellflow.coordinator.transactional_id.count", "{transactional_id}", "node.id");
    /** Producer-id entries of every partition's producer state on this broker (docs/metrics-additions.md). */
    public static final Instrument LOG_PRODUCER_ID_COUNT =
            gauge("stellflow.log.producer_id.count", "{producer_id}", "node.id");

    public static final Instrument GROUP_REBALANCE_COUNT =
            counter("stellflow.group.rebalance.count", "{event}", "node.id");
    public static final Instrument REBUILD_INDEX_COUNT =
            counter("stellflow.log.rebuild.index.count", "{event}", "node.id");
    public static final Instrument LOG_WRITE_ERROR_COUNT =
            counter("stellflow.log.write.error.count", "{error}", "node.id");
    public static final Instrument BACKGROUND_ERROR_COUNT =
            counter("stellflow.log.background.error.count", "{error}", "node.id", "task");
    public static final Instrument CLEANUP_SEGMENT_COUNT =
            counter("stellflow.log.cleanup.segment.count", "{segment}", "node.id");
    public static final Instrument QUARANTINE_SEGMENT_COUNT =
            counter("stellflow.log.quarantine.segment.count", "{segment}", "node.id");
    public static final Instrument QUARANTINE_BYTES = counter("stellflow.log.quarantine.bytes", "By", "node.id");
    public static final Instrument LOG_START_OFFSET =
            gauge("stellflow.log.start.offset", "{offset}", "node.id").withDiagnosticTopicPartition();
    public static final Instrument LOG_END_OFFSET =
            gauge("stellflow.log.end.offset", "{offset}", "node.id").withDiagnosticTopicPartition();

    // Broker: replication (ReplicaTelemetry)
    public static final Instrument REPLICA_FETCH_REQUEST_COUNT =
            counter("stellflow.replica.fetch.request.count", "{request}", "node.id");
    public static final Instrument REPLICA_FETCH_LATENCY =
            histogram("stellflow.replica.fetch.latency", "ms", "node.id");
    public static final Instrument REPLICA_LAG = gauge("stellflow.replica.lag", "By", "node.id", "replica.role");
    public static final Instrument REPLICA_LAG_TIME =
            gauge("stellflow.replica.lag.time", "ms", "node.id", "replica.role");
    public static final Instrument ISR_EXPAND_COUNT = counter("stellflow.isr.expand.count", "{event}", "node.id");
    public static final Instrument ISR_SHRINK_COUNT = counter("stellflow.isr.shrink.count", "{event}", "node.id");
    public static final Instrument HIGH_WATERMARK_ADVANCE_COUNT =
            counter("stellflow.high_watermark.advance.count", "{event}", "node.id");
    public static final Instrument LEADER_CHANGE_COUNT =
            counter("stellflow.partition.leader.change.count", "{event}", "node.id");
    public static final Instrument UNDER_REPLICATED_COUNT =
            gauge("stellflow.partition.under_replicated.count", "{partition}", "node.id");
    public static final Instrument UNDER_MIN_ISR_COUNT =
            gauge("stellflow.partition.under_min_isr.count", "{partition}", "node.id");
    public static final Instrument OFFLINE_COUNT = gauge("stellflow.partition.offline.count", "{partition}", "node.id");
    /** 1 while a log dir is offline, 0 while it is online; one series per {@code log.dirs} entry. */
    public static final Instrument LOG_DIR_OFFLINE = gauge("stellflow.log.dir.offline", "{dir}", "node.id", "log.dir");

    // Broker: capacity (CapacityGauges; docs/metrics-additions.md)
    /** Usable bytes of the file system holding a log dir. */
    public static final Instrument LOG_DIR_FREE = gauge("stellflow.log.dir.free", "By", "node.id", "log.dir");
    /** Bytes of this broker's segment files in a log dir. */
    public static final Instrument LOG_DIR_USED = gauge("stellflow.log.dir.used", "By", "node.id", "log.dir");
    /** Partitions this broker hosts a replica of. */
    public static final Instrument PARTITION_COUNT = gauge("stellflow.partition.count", "{partition}", "node.id");
    /** Partitions this broker leads. */
    public static final Instrument PARTITION_LEADER_COUNT =
            gauge("stellflow.partition.leader.count", "{partition}", "node.id");

    // Broker: topic diagnostic (TopicThroughput, only with metrics.topic.diagnostic.enabled=true)
    public static final Instrument TOPIC_PRODUCE_BYTES =
            counter("stellflow.topic.produce.bytes", "By", "node.id", "topic");
    public static final Instrument TOPIC_PRODUCE_RECORDS =
            counter("stellflow.topic.produce.records", "{record}", "node.id", "topic");
    public static final Instrument TOPIC_FETCH_BYTES = counter("stellflow.topic.fetch.bytes", "By", "node.id", "topic");

    // Broker: threads (the watchdog; docs/metrics-additions.md)
    public static final Instrument THREAD_ALIVE = gauge("stellflow.thread.alive", "{thread}", "node.id", "thread");
    public static final Instrument THREAD_HEARTBEAT_AGE =
            gauge("stellflow.thread.heartbeat.age", "ms", "node.id", "thread");
    public static final Instrument THREAD_RESTART_COUNT =
            counter("stellflow.thread.restart.count", "{restart}", "node.id");
    public static final Instrument THREAD_STUCK_COUNT = counter("stellflow.thread.stuck.count", "{event}", "node.id");

    // Broker: compression (issue #21; docs/metrics-additions.md)
    public static final Instrument COMPRESSION_BATCH_COUNT =
            counter("stellflow.compression.batch.count", "{batch}", "node.id", "codec", "direction");
    public static final Instrument COMPRESSION_COMPRESSED_BYTES =
            counter("stellflow.compression.compressed.bytes", "By", "node.id", "codec", "direction");
    public static final Instrument COMPRESSION_UNCOMPRESSED_BYTES =
            counter("stellflow.compression.uncompressed.bytes", "By", "node.id", "codec", "direction");
    public static final Instrument COMPRESSION_TIME =
            counter("stellflow.compression.time", "ns", "node.id", "codec", "direction");

    /** Every instrument a broker registers today. */
    public static final List<Instrument> REGISTERED = List.of(
            REQUEST_COUNT,
            REQUEST_LATENCY,
            REQUEST_QUEUE_DEPTH,
            RESPONSE_QUEUE_DEPTH,
            CONNECTION_COUNT,
            DECODE_ERROR_COUNT,
            PRODUCE_REQUEST_COUNT,
            PRODUCE_BYTES,
            PRODUCE_RECORDS,
            PRODUCE_LATENCY,
            FETCH_REQUEST_COUNT,
            FETCH_BYTES,
            FETCH_RECORDS,
            FETCH_LATENCY,
            LONG_POLL_HIT_COUNT,
            LONG_POLL_WAIT,
            LOG_APPEND_LATENCY,
            LOG_FLUSH_LATENCY,
            SEGMENT_ROLL_COUNT,
            SEGMENT_ACTIVE_SIZE,
            LOG_RECOVERY_TIME,
            COORDINATOR_LOAD_TIME,
            OFFSET_COMMIT_COUNT,
            OFFSET_COMMIT_LATENCY,
            COORDINATOR_GROUP_COUNT,
            COORDINATOR_TRANSACTIONAL_ID_COUNT,
            LOG_PRODUCER_ID_COUNT,
            GROUP_REBALANCE_COUNT,
            REBUILD_INDEX_COUNT,
            LOG_WRITE_ERROR_COUNT,
            BACKGROUND_ERROR_COUNT,
            CLEANUP_SEGMENT_COUNT,
            QUARANTINE_SEGMENT_COUNT,
            QUARANTINE_BYTES,
            LOG_START_OFFSET,
            LOG_END_OFFSET,
            REPLICA_FETCH_REQUEST_COUNT,
            REPLICA_FETCH_LATENCY,
            REPLICA_LAG,
            REPLICA_LAG_TIME,
            ISR_EXPAND_COUNT,
            ISR_SHRINK_COUNT,
            HIGH_WATERMARK_ADVANCE_COUNT,
            LEADER_CHANGE_COUNT,
            UNDER_REPLICATED_COUNT,
            UNDER_MIN_ISR_COUNT,
            OFFLINE_COUNT,
            THREAD_ALIVE,
            THREAD_HEARTBEAT_AGE,
            THREAD_RESTART_COUNT,
            THREAD_STUCK_COUNT,
            LOG_DIR_OFFLINE,
            LOG_DIR_FREE,
            LOG_DIR_USED,
            PARTITION_COUNT,
            PARTITION_LEADER_COUNT,
            COMPRESSION_BATCH_COUNT,
            COMPRESSION_COMPRESSED_BYTES,
            COMPRESSION_UNCOMPRESSED_BYTES,
            COMPRESSION_TIME);

    /**
     * The per-topic throughput diagnostic, registered only with {@code
     * metrics.topic.diagnostic.enabled=true} ({@link TopicThroughput}).
     */
    public static final List<Instrument> TOPIC_DIAGNOSTIC =
            List.of(TOPIC_PRODUCE_BYTES, TOPIC_PRODUCE_RECORDS, TOPIC_FETCH_BYTES);

    /**
     * Dictionary sections (their instrument name prefixes or names) not registered yet, each waiting
     * for the subsystem that produces it.
     */
    public static final List<String> DEFERRED = List.of(
            // quotas: no throttling exists yet
            "stellflow.request.throttle.count", "stellflow.request.throttle.time", "stellflow.quota.throttle.count");

    /** Bucket boundaries of every ms latency histogram ({@link Instrument#LATENCY_BUCKETS_MS}). */
    public static final List<Double> LATENCY_BUCKETS_MS = Instrument.LATENCY_BUCKETS_MS;
}
