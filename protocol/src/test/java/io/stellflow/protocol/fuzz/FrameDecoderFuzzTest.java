package io.stellflow.protocol.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the frame decoder of both connection ends ({@link FrameDecoderTarget}). CI: the corpus plus
 * seeded mutants ({@link #shortRun}); the Jazzer test replays the corpus. Soak (coverage-guided, one
 * target per run): {@code docs/fuzzing.md}.
 */
class FrameDecoderFuzzTest {
    @FuzzTest
    void frameDecoder(byte[] input) {
        FrameDecoderTarget.run(input);
    }

    @Test
    void shortRun() throws Exception {
        ShortRun.run("frameDecoder", FrameDecoderTarget::run, Corpus.load(getClass(), "frameDecoder"), 4_000);
    }
}
