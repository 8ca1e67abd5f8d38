package io.stellflow.client;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The client instruments of the metrics dictionary ({@code docs/spec/metrics.md}, "Clients"),
 * created on the {@link OpenTelemetry} instance the application passes to the producer or consumer
 * ({@link OpenTelemetry#noop()} when it passes none: nothing is exported).
 *
 * <p>Attributes: {@code client.type} ({@code producer}, {@code consumer}, {@code admin}) on every
 * instrument, plus {@code api} and {@code result} where the dictionary allows them. Never the client
 * id, the broker address or a topic.
 *
 * <p>Cost: counters are {@link LongAdder}s read by observable instruments at collection time;
 * histograms are recorded once per request, batch or poll (never per record) with attribute sets
 * built at construction. The consumer lag gauge reads a value the poll thread stores.
 *
 * <p>Compression (issue #21; {@code docs/metrics-additions.md}, "Clients: compression"), mirroring
 * the broker's {@code stellflow.compression.*}: per codec, batches the producer compressed ({@code
 * direction=compress}) or the consumer decompressed ({@code direction=decompress}), their records
 * sections compressed and uncompressed (bytes) and the codec time (ns); counted once per batch, never
 * per record, no topic attribute.
 *
 * <p>Producer splits ({@code docs/metrics-additions.md}, "Clients: producer splits"): {@code
 * stellflow.producer.batch.split.count}, batches split in two after a MESSAGE_TOO_LARGE refusal.
 *
 * <p>Not registered yet: {@code stellflow.consumer.commit.count} and {@code
 * stellflow.consumer.rebalance.count} (the consumer has no groups or offset commits yet).
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class ClientMetrics {
    /** Instrumentation scope name. */
    public static final String SCOPE = "io.stellflow.client";

    /** Names of every instrument registered, in dictionary order (tests compare them with it). */
    public static final List<String> REGISTERED = List.of(
            "stellflow.client.request.count",
            "stellflow.client.request.latency",
            "stellflow.client.metadata.refresh.count",
            "stellflow.producer.batch.size",
            "stellflow.producer.batch.record.count",
            "stellflow.producer.send.bytes",
            "stellflow.producer.send.error.count",
            "stellflow.producer.retry.count",
            "stellflow.consumer.fetch.bytes",
            "stellflow.consumer.fetch.records",
            "stellflow.consumer.poll.latency",
            "stellflow.consumer.lag",
            // Ours, beside the dictionary (docs/metrics-additions.md, "Clients: compression").
            "stellflow.client.compression.batch.count",
            "stellflow.client.compression.compressed.bytes",
            "stellflow.client.compression.uncompressed.bytes",
            "stellflow.client.compression.time",
            // Ours, beside the dictionary (docs/metrics-additions.md, "Clients: producer splits").
            "stellflow.producer.batch.split.count");

    static final int SUCCESS = 0;
    static final int ERROR = 1;
    static final int TIMEOUT = 2;
    static final int THROTTLED = 3;
    private static final String[] RESULTS = {"success", "error", "timeout", "throttled"};
    private static final short[] APIS = {
        ApiKeys.API_VERSIONS,
        ApiKeys.METADATA,
        ApiKeys.PRODUCE,
        ApiKeys.FETCH,
        ApiKeys.LIST_OFFSETS,
        ApiKeys.CREATE_TOPIC
    };
    private static final double NANOS_PER_MS = 1_000_000.0;

    /** ms buckets, the broker's: 50 us to 60 s. */
    static final List<Double> LATENCY_BUCKETS_MS = List.of(
            0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1_000.0, 2_500.0, 5_000.0,
            10_000.0, 30_000.0, 60_000.0);

    /** Batch size buckets in bytes: 256 B to 64 MiB by 4. */
    static final List<Long> BATCH_BYTES_BUCKETS =
            List.of(256L, 1_024L, 4_096L, 16_384L, 65_536L, 262_144L, 1_048_576L, 4_194_304L, 16_777_216L, 67_108_864L);

    /** Records per batch buckets: 1 to 65536 by 4. */
    static final List<Long> BATCH_RECORDS_BUCKETS = List.of(1L, 4L, 16L, 64L, 256L, 1_024L, 4_096L, 16_384L, 65_536L);

    static final AttributeKey<String> CLIENT_TYPE = AttributeKey.stringKey("client.type");
    static final AttributeKey<String> API = AttributeKey.stringKey("api");
    static final AttributeKey<String> RESULT = AttributeKey.stringKey("result");
    static final AttributeKey<String> CODEC = AttributeKey.stringKey("codec");
    static final AttributeKey<String> DIRECTION = AttributeKey.stringKey("direction");

    /** The producer's direction: records compressed into a batch. */
    static final String COMPRESS = "compress";
    /** The consumer's direction: a fetched batch decompressed. */
    static final String DECOMPRESS = "decompress";

    private static final int CODECS = CompressionType.values().length; // index = codec id; 0 unused

    private final Meter meter;
    private final Attributes type;
    private final Attributes[][] requestAttrs = new Attributes[APIS.length][RESULTS.length];
    private final Attributes[] resultAttrs = new Attributes[RESULTS.length];
    private final LongAdder[][] requests = new LongAdder[APIS.length][RESULTS.length];
    private final LongAdder metadataRefreshes = new LongAdder();
    private final LongAdder sendBytes = new LongAdder();
    private final LongAdder[] sendErrors = new LongAdder[RESULTS.length];
    private final LongAdder retries = new LongAdder();
    private final LongAdder splits = new LongAdder();
    private final LongAdder fetchBytes = new LongAdder();
    private final LongAdder fetchRecords = new LongAdder();
    private final DoubleHistogram requestLatency;
    private final LongHistogram batchSize;
    private final LongHistogram batchRecords;
    private final DoubleHistogram pollLatency;
    private volatile long consumerLag = -1;
    private final Attributes[] codecAttrs = new Attributes[CODECS];
    private final LongAdder[] codecBatches = adders(CODECS);
    private final LongAdder[] codecCompressedBytes = adders(CODECS);
    private final LongAdder[] codecUncompressedBytes = adders(CODECS);
    private final LongAdder[] codecNanos = adders(CODECS);

    /**
     * @param openTelemetry the application's SDK, or null for none
     * @param clientType {@code producer}, {@code consumer} or {@code admin}
     */
    public ClientMetrics(OpenTelemetry openTelemetry, String clientType) {
        this.meter = (openTelemetry == null ? OpenTelemetry.noop() : openTelemetry).getMeter(SCOPE);
        this.type = Attributes.of(CLIENT_TYPE, clientType);
        for (int a = 0; a < APIS.length; a++) {
            for (int r = 0; r < RESULTS.length; r++) {
                requestAttrs[a][r] =
                        Attributes.of(CLIENT_TYPE, clientType, API, ApiKeys.name(APIS[a]), RESULT, RESULTS[r]);
                requests[a][r] = new LongAdder();
            }
        }
        for (int r = 0; r < RESULTS.length; r++) {
            resultAttrs[r] = Attributes.of(CLIENT_TYPE, clientType, RESULT, RESULTS[r]);
            sendErrors[r] = new LongAdder();
        }
        counter("stellflow.client.request.count", "{request}", m -> {
            for (int a = 0; a < APIS.length; a++) {
                for (int r = 0; r < RESULTS.length; r++) {
                    long v = requests[a][r].sum();
                    if (v > 0 || r == SUCCESS) {
                        m.record(v, requestAttrs[a][r]);
                    }
                }
            }
        });
        counter("stellflow.client.metadata.refresh.count", "{event}", m -> m.record(metadataRefreshes.sum(), type));
        requestLatency = meter.histogramBuilder("stellflow.client.request.latency")
                .setUnit("ms")
                .setExplicitBucketBoundariesAdvice(LATENCY_BUCKETS_MS)
                .build();
        if (clientType.equals("producer")) {
            counter("stellflow.producer.send.bytes", "By", m -> m.record(sendBytes.sum(), type));
            counter("stellflow.producer.send.error.count", "{error}", m -> {
                for (int r = ERROR; r < RESULTS.length; r++) {
                    m.record(sendErrors[r].sum(), resultAttrs[r]);
                }
            });
            counter("stellflow.producer.retry.count", "{event}", m -> m.record(retries.sum(), type));
            counter("stellflow.producer.batch.split.count", "{batch}", m -> m.record(splits.sum(), type));
        }
        batchSize = meter.histogramBuilder("stellflow.producer.batch.size")
                .setUnit("By")
                .ofLongs()
                .setExplicitBucketBoundariesAdvice(BATCH_BYTES_BUCKETS)
                .build();
        batchRecords = meter.histogramBuilder("stellflow.producer.batch.record.count")
                .setUnit("{record}")
                .ofLongs()
                .setExplicitBucketBoundariesAdvice(BATCH_RECORDS_BUCKETS)
                .build();
        if (clientType.equals("consumer")) {
            counter("stellflow.consumer.fetch.bytes", "By", m -> m.record(fetchBytes.sum(), type));
            counter("stellflow.consumer.fetch.records", "{record}", m -> m.record(fetchRecords.sum(), type));
            meter.gaugeBuilder("stellflow.consumer.lag")
                    .ofLongs()
                    .setUnit("{record}")
                    .buildWithCallback(m -> {
                        long lag = consumerLag;
                        if (lag >= 0) {
                            m.record(lag, type);
                        }
                    });
        }
        pollLatency = meter.histogramBuilder("stellflow.consumer.poll.latency")
                .setUnit("ms")
                .setExplicitBucketBoundariesAdvice(LATENCY_BUCKETS_MS)
                .build();
        if (clientType.equals("producer") || clientType.equals("consumer")) {
            String direction = clientType.equals("producer") ? COMPRESS : DECOMPRESS;
            for (int c = 1; c < CODECS; c++) {
                codecAttrs[c] = Attributes.of(
                        CLIENT_TYPE, clientType, CODEC, CompressionType.forId(c).configName(), DIRECTION, direction);
            }
            counter("stellflow.client.compression.batch.count", "{batch}", m -> perCodec(codecBatches, m));
            counter("stellflow.client.compression.compressed.bytes", "By", m -> perCodec(codecCompressedBytes, m));
            counter("stellflow.client.compression.uncompressed.bytes", "By", m -> perCodec(codecUncompressedBytes, m));
            counter("stellflow.client.compression.time", "ns", m -> perCodec(codecNanos, m));
        }
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** One point per codec that has worked (a client uses one or two codecs, not all four). */
    private void perCodec(LongAdder[] adders, ObservableLongMeasurement m) {
        for (int c = 1; c < CODECS; c++) {
            if (codecBatches[c].sum() > 0) {
                m.record(adders[c].sum(), codecAttrs[c]);
            }
        }
    }

    /** No instruments exported (an application that passed no OpenTelemetry). */
    static ClientMetrics none(String clientType) {
        return new ClientMetrics(null, clientType);
    }

    /** The {@code result} index of an error code: 0 success, timeout for client-side expiry. */
    static int result(short errorCode, boolean timedOut) {
        if (timedOut) {
            return TIMEOUT;
        }
        return switch (errorCode) {
            case Errors.NONE -> SUCCESS;
            case Errors.THROTTLED -> THROTTLED;
            default -> ERROR;
        };
    }

    /** One request answered (or failed) after {@code nanos}. */
    void request(short apiKey, int result, long nanos) {
        for (int a = 0; a < APIS.length; a++) {
            if (APIS[a] == apiKey) {
                requests[a][result].increment();
                requestLatency.record(nanos / NANOS_PER_MS, requestAttrs[a][result]);
                return;
            }
        }
    }

    void metadataRefreshed() {
        metadataRefreshes.increment();
    }

    /** A producer batch went out. */
    void batchSent(int bytes, int records) {
        sendBytes.add(bytes);
        batchSize.record(bytes, type);
        batchRecords.record(records, type);
    }

    /** A batch failed for good (its records' futures failed). */
    void sendFailed(int result) {
        sendErrors[result == SUCCESS ? ERROR : result].increment();
    }

    /**
     * A batch refused as too large was split in two (Kafka's {@code batch-split-total}); each split
     * also counts as a retry ({@link #retried}).
     */
    void batchSplit() {
        splits.increment();
    }

    /** A batch goes back for another attempt. */
    void retried() {
        retries.increment();
    }

    /** A Fetch answer's records bytes (what the broker sent for one partition). */
    void fetched(long bytes) {
        fetchBytes.add(bytes);
    }

    /** One {@code poll} call: how long it took and how many records it returned. */
    void polled(long nanos, int records) {
        fetchRecords.add(records);
        pollLatency.record(nanos / NANOS_PER_MS, type);
    }

    /** Records between the consumer's positions and the partitions' HWs (LSOs at read_committed), summed. */
    void consumerLag(long records) {
        consumerLag = records;
    }

    /**
     * One batch through a codec (the producer's compression or the consumer's decompression): its
     * records section compressed and uncompressed, in bytes, and the codec time in ns. Once per batch.
     */
    void compression(CompressionType type, long compressedBytes, long uncompressedBytes, long elapsedNs) {
        int c = type.id();
        codecBatches[c].increment();
        codecCompressedBytes[c].add(compressedBytes);
        codecUncompressedBytes[c].add(uncompressedBytes);
        codecNanos[c].add(elapsedNs);
    }

    private void counter(String name, String unit, Consumer<ObservableLongMeasurement> callback) {
        meter.counterBuilder(name).setUnit(unit).buildWithCallback(callback);
    }
}
