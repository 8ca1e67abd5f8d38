package io.stellflow.protocol.fuzz;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
}
