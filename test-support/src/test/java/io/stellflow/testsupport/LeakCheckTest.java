package io.stellflow.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Runs with this module's argLine: PARANOID and {@link RecordingLeakDetector} as Netty's detector. */
class LeakCheckTest {
    @Test
    void aBufferCollectedWithoutReleaseIsReportedOnceAndThenCleared() throws Exception {
        assertThat(LeakCheck.collectReports()).as("no leak before this test").isEmpty();

        leakOneBuffer();
        // The report needs a GC that collects the buffer; collectReports forces a few, retry a bit.
        String[] report = new String[1];
        Wait.until(
                Duration.ofSeconds(20),
                () -> {
                    try {
                        var reports = LeakCheck.collectReports();
                        if (!reports.isEmpty()) {
                            report[0] = String.join("\n", reports);
                        }
                        return report[0] != null;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new AssertionError(e);
                    }
                },
                "the leak report of an unreleased buffer");

        assertThat(report[0]).startsWith("LEAK: ByteBuf was not released").contains("leakOneBuffer");
        assertThat(RecordingLeakDetector.drain()).as("drained").isEmpty();
        assertThat(RecordingLeakDetector.installed()).isTrue();
    }

    private static void leakOneBuffer() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeLong(42); // an access record, so the report names this method
    }
}
