package io.stellflow.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.List;
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

    @Test
    void theSummaryNamesTheClassAndEachReportsOwnFramesOnce() {
        String report = "LEAK: ByteBuf was not released\nRecent access records:\n#1:\n"
                + "\tio.netty.buffer.AdvancedLeakAwareByteBuf.release(AdvancedLeakAwareByteBuf.java:1)\n"
                + "\tio.stellflow.broker.Owner.handle(Owner.java:10)\n"
                + "\tio.stellflow.broker.Owner.handle(Owner.java:10)\n"
                + "#2:\n\tio.stellflow.protocol.FrameDecoder.decode(FrameDecoder.java:147)\n"
                + "Created at:\n\tio.netty.buffer.AbstractByteBufAllocator.directBuffer(AbstractByteBufAllocator.java:2)\n";

        String summary = LeakCheck.summary("io.stellflow.broker.SomeTest", List.of(report, "LEAK: no records"));

        assertThat(summary)
                .isEqualTo("LEAK SUMMARY: 2 report(s) after io.stellflow.broker.SomeTest\n"
                        + "  report 1:\n"
                        + "    io.stellflow.broker.Owner.handle(Owner.java:10)\n"
                        + "    io.stellflow.protocol.FrameDecoder.decode(FrameDecoder.java:147)\n"
                        + "  report 2:");
    }

    private static void leakOneBuffer() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeLong(42); // an access record, so the report names this method
    }
}
