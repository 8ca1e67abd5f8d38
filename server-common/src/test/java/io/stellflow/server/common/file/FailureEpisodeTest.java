package io.stellflow.server.common.file;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class FailureEpisodeTest {
    @TempDir
    Path dir;

    private static final String LOGGER = "failure-episode-test";
    private final Logger logger = LoggerFactory.getLogger(LOGGER);

    @RegisterExtension
    final LogLines lines = LogLines.of(LOGGER).atLevel(Level.DEBUG);

    private final List<String> counted = new ArrayList<>();
    private long nowMs = 1_000_000;
    private final InstantSource clock = () -> Instant.ofEpochMilli(nowMs);
    private FailureEpisode episode;

    @BeforeEach
    void createEpisode() {
        episode = new FailureEpisode("checkpoint", logger, clock, counted::add);
    }

    private static IOException noSpace(String file) {
        FileSystemException e = new FileSystemException(file, null, FileErrors.NO_SPACE);
        return e;
    }

    @Test
    void theFirstFailureIsOneWarnNamingTaskDirFileFreeBytesAndReasonWithoutATrace() {
        assertThat(episode.failed(
                        dir, null, noSpace(dir.resolve("recovery-point.tmp").toString())))
                .isTrue();

        assertThat(lines.at(Level.WARN)).hasSize(1);
        ILoggingEvent line = lines.at(Level.WARN).getFirst();
        assertThat(line.getFormattedMessage())
                .startsWith("BACKGROUND_TASK_FAILED task=checkpoint dir=" + dir + " file="
                        + dir.resolve("recovery-point.tmp") + " freeBytes=")
                .doesNotContain("freeBytes=-1")
                .endsWith("error=java.nio.file.FileSystemException reason=No space left on device");
        assertThat(line.getThrowableProxy()).isNull();
        assertThat(counted).isEmpty();
        assertThat(episode.failures()).isEqualTo(1);
    }

    @Test
    void theCallersFileIsNamedWhenTheCauseNamesNone() {
        episode.failed(dir, dir.resolve("f"), new IOException(FileErrors.NO_SPACE));

        assertThat(lines.at(Level.WARN).getFirst().getFormattedMessage()).contains(" file=" + dir.resolve("f") + " ");
    }

    @Test
    void aFailureThatIsNoIoErrorCarriesItsStackTraceOnce() {
        episode.failed(dir, null, new IllegalStateException("bug"));
        episode.failed(dir, null, new IllegalStateException("bug"));

        assertThat(lines.at(Level.WARN)).hasSize(1);
        assertThat(lines.at(Level.WARN).getFirst().getThrowableProxy().getClassName())
                .isEqualTo(IllegalStateException.class.getName());
        assertThat(lines.withThrowable()).hasSize(1);
    }

    @Test
    void laterFailuresAreCountedAndSummarisedAtMostEveryFiveMinutes() {
        episode.failed(dir, null, noSpace("a"));
        for (int i = 0; i < 299; i++) { // one failure per second for 299 s: no summary yet
            nowMs += 1000;
            assertThat(episode.failed(dir, null, noSpace("a"))).isFalse();
        }
        assertThat(lines.at(Level.WARN)).hasSize(1);
        assertThat(counted).hasSize(299).containsOnly("checkpoint");

        nowMs += 1000; // 300 s after the first line
        episode.failed(dir, null, noSpace("a"));
        assertThat(lines.at(Level.WARN)).hasSize(2);
        assertThat(lines.at(Level.WARN).get(1).getFormattedMessage())
                .isEqualTo("BACKGROUND_TASK_FAILING task=checkpoint failures=300 seconds=300"
                        + " reason=No space left on device: checkpoint failed 300 times in the last 300 s");
        assertThat(lines.at(Level.WARN).get(1).getThrowableProxy()).isNull();

        nowMs += 299_000;
        episode.failed(dir, null, noSpace("a"));
        assertThat(lines.at(Level.WARN)).hasSize(2);
        nowMs += 1000;
        episode.failed(dir, null, noSpace("a"));
        assertThat(lines.at(Level.WARN)).hasSize(3);
        assertThat(lines.at(Level.WARN).get(2).getFormattedMessage()).contains("failed 2 times in the last 300 s");
        assertThat(counted).hasSize(302);
        assertThat(lines.withThrowable()).isEmpty();
    }

    @Test
    void aSuccessEndsTheEpisodeWithOneInfoLineAndTheNextFailureStartsANewOne() {
        assertThat(episode.succeeded()).isFalse(); // no episode: nothing to say
        episode.failed(dir, null, noSpace("a"));
        episode.failed(dir, null, noSpace("a"));
        nowMs += 5000;

        assertThat(episode.succeeded()).isTrue();
        assertThat(episode.succeeded()).isFalse();
        assertThat(lines.at(Level.INFO)).hasSize(1);
        assertThat(lines.at(Level.INFO).getFirst().getFormattedMessage())
                .isEqualTo("BACKGROUND_TASK_RECOVERED task=checkpoint failures=2 downMs=5000"
                        + " lastReason=No space left on device");
        assertThat(episode.failures()).isZero();

        assertThat(episode.failed(dir, null, noSpace("a"))).isTrue();
        assertThat(lines.at(Level.WARN)).hasSize(2);
        assertThat(counted).hasSize(1);
    }

    @Test
    void anUnreadableDirReportsFreeBytesMinusOne() {
        episode.failed(dir.resolve("missing"), null, noSpace("a"));

        assertThat(lines.at(Level.WARN).getFirst().getFormattedMessage()).contains(" freeBytes=-1 ");
    }
}
