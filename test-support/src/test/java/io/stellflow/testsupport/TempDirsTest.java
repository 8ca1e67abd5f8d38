package io.stellflow.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TempDirsTest {
    @TempDir
    Path outside;

    @Test
    void createsAnEmptyDirNamedByThePrefix() throws Exception {
        Path dir = TempDirs.create("sf-tempdirs-test-");
        try {
            assertThat(dir).isEmptyDirectory();
            assertThat(dir.getFileName().toString()).startsWith("sf-tempdirs-test-");
        } finally {
            TempDirs.deleteRecursively(dir);
        }
        assertThat(dir).doesNotExist();
    }

    @Test
    void deletesANestedTreeButNotTheTargetOfALink() throws Exception {
        Path dir = TempDirs.create("sf-tempdirs-test-");
        Files.createDirectories(dir.resolve("a/b/c"));
        Files.writeString(dir.resolve("a/b/c/00000000000000000000.log"), "x");
        Files.writeString(dir.resolve("a/top.index"), "y");
        Path kept = Files.writeString(outside.resolve("kept"), "z");
        Files.createSymbolicLink(dir.resolve("a/link"), kept);

        TempDirs.deleteRecursively(dir);

        assertThat(dir).doesNotExist();
        assertThat(kept).hasContent("z");
    }

    @Test
    void aMissingDirIsNothingToDelete() throws Exception {
        Path missing = outside.resolve("never-created");
        TempDirs.deleteRecursively(missing);
        assertThat(missing).doesNotExist();
    }
}
