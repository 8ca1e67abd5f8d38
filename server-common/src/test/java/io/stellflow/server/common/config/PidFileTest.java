package io.stellflow.server.common.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PidFileTest {
    @TempDir
    Path dir;

    @Test
    void removesOnlyAFileThatHoldsItsOwnPid() throws Exception {
        Path ours = dir.resolve("stellflow-a.pid");
        Files.writeString(ours, "4242\n");
        assertThat(PidFile.removeIfOurs(ours, "4242")).isTrue();
        assertThat(ours).doesNotExist();

        // A second launcher refused on the same config must not remove the running node's file.
        Path theirs = dir.resolve("stellflow-b.pid");
        Files.writeString(theirs, "1717\n");
        assertThat(PidFile.removeIfOurs(theirs, "4242")).isFalse();
        assertThat(theirs).hasContent("1717\n");

        assertThat(PidFile.removeIfOurs(dir.resolve("gone.pid"), "4242")).isFalse();
    }
}
