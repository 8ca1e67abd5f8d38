package io.stellflow.protocol.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
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
        boolean write = Boolean.getBoolean("stellflow.fuzz.writeSeeds");
        for (Map.Entry<String, Map<String, byte[]>> corpus : SeedFiles.all().entrySet()) {
            Path dir = DIR.resolve(corpus.getKey());
            for (Map.Entry<String, byte[]> seed : corpus.getValue().entrySet()) {
                Path file = dir.resolve(seed.getKey());
                if (write) {
                    Files.createDirectories(dir);
                    Files.write(file, seed.getValue());
                }
                assertThat(file)
                        .as("seed %s (regenerate with -Dstellflow.fuzz.writeSeeds=true)", file)
                        .exists()
                        .hasBinaryContent(seed.getValue());
            }
        }
    }
}
