package io.stellflow.broker.append;

import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import io.stellflow.server.common.telemetry.LogThrottle;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log line of a compressed batch refused on Produce (decision 9.o): a decompression bomb over
 * {@code compression.max.decompressed.bytes}, a malformed container, or records that break §7.7
 * step 7; or any compressed batch on a log with {@code compression.produce.policy=refuse}. One
 * WARN line per {@value #INTERVAL_SECONDS} s for the whole broker names the topic-partition, codec
 * and reason (with the cap for a bomb) and how many refusals since the last WARN went to DEBUG; the
 * others go to DEBUG, so a misbehaving producer cannot flood the log ({@link LogThrottle}).
 *
 * <p>Thread-safety: any thread (append agents, request threads).
 */
public final class CompressionRefusals {
    private static final Logger LOG = LoggerFactory.getLogger(CompressionRefusals.class);

    /** Seconds between two WARN lines. */
    static final long INTERVAL_SECONDS = 10;

    private final LogThrottle warnLines;

    /** @param nanoClock monotonic time in ns ({@code System::nanoTime}; tests drive their own) */
    public CompressionRefusals(LongSupplier nanoClock) {
        this.warnLines = new LogThrottle(nanoClock, INTERVAL_SECONDS);
    }

    /**
     * Logs the refusal of a compressed batch of codec {@code codec} for {@code partition}, whose
     * {@code compression.produce.policy} is {@code refuse} (answered {@code FEATURE_NOT_ENABLED}).
     * Returns whether the line went out at WARN.
     */
    public boolean refusedByPolicy(Object partition, CompressionType codec) {
        if (warnLines.tryAcquire()) {
            LOG.warn(
                    "Produce to {} refused with FEATURE_NOT_ENABLED: a {} batch, and the topic's"
                            + " compression.produce.policy is refuse; {}further refusals within {} s at DEBUG",
                    partition,
                    codec.configName(),
                    warnLines.takeSuppressedNote("WARN"),
                    INTERVAL_SECONDS);
            return true;
        }
        LOG.debug(
                "Produce to {} refused with FEATURE_NOT_ENABLED: a {} batch, compression.produce.policy=refuse",
                partition,
                codec.configName());
        return false;
    }

    /**
     * Logs the refusal {@code validator} just decided (its {@link CompressedRecordsValidator#outcome}
     * is not VALID) for {@code partition} answered with {@code errorName}. Returns whether the line
     * went out at WARN.
     */
    public boolean refused(Object partition, String errorName, CompressedRecordsValidator validator) {
        boolean warn = warnLines.tryAcquire();
        String outcome = switch (validator.outcome()) {
            case CompressedRecordsValidator.OVER_CAP ->
                "over the decompression cap (compression.max.decompressed.bytes=" + validator.maxDecompressedBytes()
                        + ")";
            case CompressedRecordsValidator.MALFORMED -> "malformed container";
            default -> "invalid records";
        };
        if (warn) {
            LOG.warn(
                    "Produce to {} refused with {}: {} batch {}: {}; {}further refusals within {} s at DEBUG",
                    partition,
                    errorName,
                    validator.lastType().configName(),
                    outcome,
                    validator.failureReason(),
                    warnLines.takeSuppressedNote("WARN"),
                    INTERVAL_SECONDS);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "Produce to {} refused with {}: {} batch {}: {}",
                    partition,
                    errorName,
                    validator.lastType().configName(),
                    outcome,
                    validator.failureReason());
        }
        return warn;
    }
}
