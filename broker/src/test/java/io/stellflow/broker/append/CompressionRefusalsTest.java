package io.stellflow.broker.append;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.testsupport.LogLines;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One WARN per interval; the next WARN says how many refusals went to DEBUG in between (a user test
 * saw only the first refusal of each window and no sign of the others).
 */
class CompressionRefusalsTest {
    @RegisterExtension
    final LogLines lines = LogLines.of(CompressionRefusals.class);

    private long nowNs;

    @Test
    void theNextWarnCountsTheRefusalsLoggedAtDebug() {
        CompressionRefusals refusals = new CompressionRefusals(() -> nowNs);
        assertThat(refusals.refusedByPolicy("t-0", CompressionType.ZSTD)).isTrue();
        assertThat(refusals.refusedByPolicy("t-0", CompressionType.ZSTD)).isFalse();
        assertThat(refusals.refusedByPolicy("t-1", CompressionType.LZ4)).isFalse();
        nowNs += TimeUnit.SECONDS.toNanos(CompressionRefusals.INTERVAL_SECONDS);
        assertThat(refusals.refusedByPolicy("t-2", CompressionType.GZIP)).isTrue();

        List<ILoggingEvent> warns = lines.at(Level.WARN);
        assertThat(warns).hasSize(2);
        assertThat(warns.get(0).getFormattedMessage())
                .contains("t-0", "zstd", "compression.produce.policy is refuse")
                .doesNotContain("more since");
        assertThat(warns.get(1).getFormattedMessage()).contains("t-2", "gzip", "2 more since the last WARN at DEBUG");
    }
}
