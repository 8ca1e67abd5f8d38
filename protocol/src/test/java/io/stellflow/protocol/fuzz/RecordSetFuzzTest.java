package io.stellflow.protocol.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the batch validator and the views over a validated record set ({@link RecordSetTarget}).
 * CI: the corpus plus seeded mutants ({@link #shortRun}); the Jazzer test replays the corpus. Soak
 * (coverage-guided): {@code docs/fuzzing.md}.
 */
class RecordSetFuzzTest {
    @FuzzTest
    void recordSet(byte[] input) {
        RecordSetTarget.run(input);
    }

    @Test
    void shortRun() throws Exception {
        ShortRun.run("recordSet", RecordSetTarget::run, Corpus.load(getClass(), "recordSet"), 8_000);
    }
}
