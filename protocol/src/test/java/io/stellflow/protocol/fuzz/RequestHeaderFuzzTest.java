package io.stellflow.protocol.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the request header decoder ({@link RequestHeaderTarget}). CI: the corpus plus seeded
 * mutants ({@link #shortRun}); the Jazzer test replays the corpus. Soak (coverage-guided, one
 * target per run): {@code docs/fuzzing.md}.
 */
class RequestHeaderFuzzTest {
    @FuzzTest
    void requestHeader(byte[] input) {
        RequestHeaderTarget.run(input);
    }

    @Test
    void shortRun() throws Exception {
        ShortRun.run("requestHeader", RequestHeaderTarget::run, Corpus.load(getClass(), "requestHeader"), 10_000);
    }
}
