package io.stellflow.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Temp dirs whose life is not one test method, so JUnit's {@code @TempDir} does not fit: a node
 * shared by a test class, a dir deleted in the background after its nodes closed, a dir a property
 * test creates per try. Anything a single test owns should use {@code @TempDir}.
 *
 * <p>Thread-safety: stateless; deleting a tree that another thread still writes fails with the
 * file it could not delete.
 */
public final class TempDirs {
    private TempDirs() {}

    /**
     * A new empty dir under {@code java.io.tmpdir}, named {@code prefix} and a random suffix.
     *
     * @throws IOException when it cannot be created
     */
    public static Path create(String prefix) throws IOException {
        return Files.createTempDirectory(prefix);
    }

    /**
     * Deletes {@code dir} and everything under it; nothing when it does not exist. Does not follow
     * symbolic links (a link is deleted, not its target).
     *
     * @throws IOException naming the first file that could not be deleted
     */
    public static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> deepestFirst;
        try (Stream<Path> paths = Files.walk(dir)) {
            deepestFirst = paths.sorted(Comparator.reverseOrder()).toList();
        }
        for (Path p : deepestFirst) {
            Files.deleteIfExists(p);
        }
    }
}
