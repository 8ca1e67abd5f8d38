package io.stellflow.broker.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import io.stellflow.server.common.telemetry.InstrumentCallbacks;
import java.util.concurrent.atomic.LongAdder;

/**
 * The broker's compression instruments (issue #21, {@code docs/metrics-additions.md}, "Broker:
 * compression"): per codec and per direction, the compressed and uncompressed bytes a codec went
 * through (their quotient is the compression ratio) and the time it took, in ns, as counters.
 * Directions: {@code validate} (Produce: the streaming decompression that validates a compressed
 * batch), {@code recompress} (a topic whose {@code compression.type} differs from the producer's:
 * decompress and compress again, or store uncompressed), {@code fetch_v0} (a compressed batch
 * decompressed for a Fetch v0 reader). No topic attribute.
 *
 * <p>Counters are {@link LongAdder}s read at collection time; one add per batch, never per record.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class CompressionTelemetry implements CompressedRecordsValidator.Listener {
    /** The {@code codec} attribute: gzip, snappy, lz4 or zstd. */
    static final AttributeKey<String> CODEC = AttributeKey.stringKey("codec");
    /** The {@code direction} attribute: validate, recompress or fetch_v0. */
    static final AttributeKey<String> DIRECTION = AttributeKey.stringKey("direction");

    /** Directions, indexes of the adders. */
    public static final int VALIDATE = 0;

    public static final int RECOMPRESS = 1;
    public static final int FETCH_V0 = 2;

    private static final String[] DIRECTIONS = {"validate", "recompress", "fetch_v0"};
    private static final int CODECS = CompressionType.values().length; // index = codec id; 0 unused

    private final Attributes[][] attrs = new Attributes[DIRECTIONS.length][CODECS];
    private final LongAdder[][] batches = adders();
    private final LongAdder[][] compressedBytes = adders();
    private final LongAdder[][] uncompressedBytes = adders();
    private final LongAdder[][] nanos = adders();

    CompressionTelemetry(InstrumentCallbacks callbacks, int nodeId) {
        for (int d = 0; d < DIRECTIONS.length; d++) {
            for (int c = 1; c < CODECS; c++) {
                attrs[d][c] = Attributes.of(
                        BrokerMetrics.NODE_ID,
                        (long) nodeId,
                        CODEC,
                        CompressionType.forId(c).configName(),
                        DIRECTION,
                        DIRECTIONS[d]);
            }
        }
        callbacks.counter(BrokerInstruments.COMPRESSION_BATCH_COUNT, m -> each(batches, m));
        callbacks.counter(BrokerInstruments.COMPRESSION_COMPRESSED_BYTES, m -> each(compressedBytes, m));
        callbacks.counter(BrokerInstruments.COMPRESSION_UNCOMPRESSED_BYTES, m -> each(uncompressedBytes, m));
        callbacks.counter(BrokerInstruments.COMPRESSION_TIME, m -> each(nanos, m));
    }

    private void each(LongAdder[][] adders, io.opentelemetry.api.metrics.ObservableLongMeasurement m) {
        for (int d = 0; d < DIRECTIONS.length; d++) {
            for (int c = 1; c < CODECS; c++) {
                m.record(adders[d][c].sum(), attrs[d][c]);
            }
        }
    }

    private static LongAdder[][] adders() {
        LongAdder[][] a = new LongAdder[DIRECTIONS.length][CODECS];
        for (LongAdder[] row : a) {
            for (int c = 0; c < CODECS; c++) {
                row[c] = new LongAdder();
            }
        }
        return a;
    }

    /**
     * One batch through a codec.
     *
     * @param direction {@link #VALIDATE}, {@link #RECOMPRESS} or {@link #FETCH_V0}
     * @param type the codec (not none)
     * @param compressed the batch's records section in the codec, bytes
     * @param uncompressed the same records uncompressed, bytes
     * @param elapsedNs time spent in the codec and the record walk
     */
    public void batch(int direction, CompressionType type, long compressed, long uncompressed, long elapsedNs) {
        int c = type.id();
        batches[direction][c].increment();
        compressedBytes[direction][c].add(compressed);
        uncompressedBytes[direction][c].add(uncompressed);
        nanos[direction][c].add(elapsedNs);
    }

    @Override
    public void validated(CompressionType type, long compressedBytes, long decompressedBytes, long elapsedNs) {
        batch(VALIDATE, type, compressedBytes, decompressedBytes, elapsedNs);
    }

    /** Batches of {@code direction} and {@code type} so far (tests). */
    public long batches(int direction, CompressionType type) {
        return batches[direction][type.id()].sum();
    }
}
