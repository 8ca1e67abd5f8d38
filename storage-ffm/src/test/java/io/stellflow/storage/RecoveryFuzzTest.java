package io.stellflow.storage;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.stellflow.protocol.fuzz.Corpus;
import io.stellflow.protocol.fuzz.ShortRun;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Fuzzes recovery over mutated segment files ({@link RecoveryFuzzTarget}). CI: the corpus plus
 * seeded mutants of it ({@link #shortRun}); the Jazzer test replays the corpus. Soak
 * (coverage-guided): {@code docs/fuzzing.md}. Storage logging is turned down to ERROR meanwhile
 * (every damaged input logs WARNs by design).
 */
class RecoveryFuzzTest {
    private static final Logger STORAGE = (Logger) LoggerFactory.getLogger("io.stellflow.storage");
    private static Level previous;

    @BeforeAll
    static void quiet() {
        previous = STORAGE.getLevel();
        STORAGE.setLevel(Level.ERROR);
    }

    @AfterAll
    static void restore() {
        STORAGE.setLevel(previous);
    }

    @FuzzTest
    void recovery(byte[] input) throws Exception {
        RecoveryFuzzTarget.run(input);
    }

    @Test
    void shortRun() throws Exception {
        ShortRun.run("recovery", RecoveryFuzzTarget::run, Corpus.load(getClass(), "recovery"), 400);
    }

    /** The committed seeds are {@link RecoverySeeds}'; {@code -Dstellflow.fuzz.writeSeeds=true} rewrites them. */
    @Test
    void committedSeedsAreTheGeneratedOnes() throws IOException {
        Path dir = Path.of("src/test/resources/io/stellflow/storage/RecoveryFuzzTestInputs/recovery");
        Corpus.assertCommittedSeeds(dir, RecoverySeeds.all());
    }
}
