package io.stellflow.protocol.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A fuzz target's corpus as Jazzer keeps it: every file of the test resource directory {@code
 * <TestClass>Inputs/<method>/} beside the test class (the seeds of {@link SeedFiles}, plus any
 * finding Jazzer saved there, which then replays as a regression input).
 */
public final class Corpus {
    private Corpus() {}

    /** The inputs of {@code testClass}'s fuzz test {@code method}, sorted by file name. */
    public static List<byte[]> load(Class<?> testClass, String method) {
        String dir = testClass.getSimpleName() + "Inputs/" + method;
        URL url = testClass.getResource(dir);
        if (url == null) {
            throw new IllegalStateException("no corpus directory " + dir + " beside " + testClass.getName());
        }
        List<byte[]> inputs = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of(url.toURI()))) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                inputs.add(Files.readAllBytes(f));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        if (inputs.isEmpty()) {
            throw new IllegalStateException("corpus directory " + dir + " is empty");
        }
        return inputs;
    }

    /**
     * Asserts that {@code dir} (a corpus directory in the source tree) holds every generated seed
     * with exactly its bytes; with {@code -Dstellflow.fuzz.writeSeeds=true} it first writes them.
     */
    public static void assertCommittedSeeds(Path dir, Map<String, byte[]> seeds) throws IOException {
        boolean write = Boolean.getBoolean("stellflow.fuzz.writeSeeds");
        for (Map.Entry<String, byte[]> seed : seeds.entrySet()) {
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
