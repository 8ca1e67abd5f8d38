package io.stellflow.protocol.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.testsupport.LeakCheck;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fuzz harness itself catches what it promises to: a thrown finding, a kept reference, a leak. */
class HarnessTest {
    @Test
    void aTargetThatKeepsAReferenceToItsInputIsAFinding() {
        FuzzBuffers bufs = new FuzzBuffers();
        ByteBuf input = bufs.fromInput(new byte[] {2, 1, 2, 3});
        input.retain();
        assertThatThrownBy(bufs::close).isInstanceOf(AssertionError.class).hasMessageContaining("refCnt 2");
        assertThat(input.refCnt()).isZero();
    }

    @Test
    void aNettyLeakReportIsSeen() throws Exception {
        List<String> reports = new ArrayList<>();
        for (int attempt = 0; attempt < 10 && reports.isEmpty(); attempt++) {
            leakOne();
            reports.addAll(LeakCheck.collectReports());
        }
        assertThat(reports).anyMatch(r -> r.contains("LEAK"));
    }

    private static void leakOne() {
        ByteBuf leaked = Unpooled.directBuffer(64);
        leaked.writeLong(42);
    }

    @Test
    void aFindingFailsTheShortRunAndKeepsItsInput() {
        FuzzTarget target = input -> {
            if (input.length > 1 && input[1] == 0x7f) {
                throw new IllegalStateException("boom");
            }
        };
        assertThatThrownBy(() -> ShortRun.run("harness-self-test", target, List.of(new byte[] {0, 0x7f, 1}), 10))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("finding on corpus file 0")
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThat(Path.of("target/fuzz-findings/harness-self-test/corpus-file-0.bin"))
                .exists()
                .hasBinaryContent(new byte[] {0, 0x7f, 1});
    }

    @Test
    void mutantsAreDeterministicInTheSeed() {
        List<byte[]> corpus = List.of(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, new byte[] {9, 9});
        Mutator a = new Mutator(5, corpus);
        Mutator b = new Mutator(5, corpus);
        for (int i = 0; i < 100; i++) {
            assertThat(a.next()).isEqualTo(b.next());
        }
    }
}
