package io.stellflow.protocol.fuzz;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The committed seed files are exactly {@link SeedFiles}' (so the corpora stay made of valid,
 * reproducible inputs). {@code -Dstellflow.fuzz.writeSeeds=true} rewrites them in {@code
 * src/test/resources}. Files a fuzzer added (findings, kept as regression inputs) are left alone.
 */
class SeedFilesTest {
    private static final Path DIR = Path.of("src/test/resources/io/stellflow/protocol/fuzz");

    @Test
    void committedSeedsAreTheGeneratedOnes() throws IOException {
        for (Map.Entry<String, Map<String, byte[]>> corpus : SeedFiles.all().entrySet()) {
            Corpus.assertCommittedSeeds(DIR.resolve(corpus.getKey()), corpus.getValue());
        }
    }
}
