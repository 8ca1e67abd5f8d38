package io.stellflow.broker.topic;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.LogManager;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LogDirFailures} over real logs in two dirs: an I/O error that is not "no space", a removed
 * dir and a removed partition dir each take exactly their log dir offline (one {@code
 * LOG_DIR_OFFLINE} line, every partition there marked, the other dir untouched); a no-space failure
 * does not; placement refuses offline dirs and dirs without room for the new partition's indexes
 * and its topic's largest batch.
 */
class LogDirFailuresTest {
    private static final LogConfig CONFIG =
            LogConfig.builder().indexMaxBytes(4096).build();
    private static final int MESSAGE_MAX_BYTES = 1000;
    /** A new partition's room at the broker's defaults: the offset index (4096), the time index (513 x 12), a batch. */
    private static final long REQUIRED = 4096 + 513 * 12 + MESSAGE_MAX_BYTES;

    @TempDir
    Path dir;

    private Path d1;
    private Path d2;
    private final AtomicLong freeBytes = new AtomicLong(1 << 30);
    private final AtomicInteger passes = new AtomicInteger();
    private final List<Partition> partitions = new ArrayList<>();
    private final List<UnifiedLog> logs = new ArrayList<>();
    /** Partitions being deleted: the log manager let go of them. */
    private final List<Partition> released = new ArrayList<>();

    @RegisterExtension
    final LogLines lines = LogLines.of(LogDirFailures.class);

    private LogDirFailures failures;

    @BeforeEach
    void setUp() throws IOException {
        d1 = Files.createDirectory(dir.resolve("d1"));
        d2 = Files.createDirectory(dir.resolve("d2"));
        failures = new LogDirFailures(
                List.of(d1, d2),
                action -> partitions.forEach(action),
                CONFIG,
                MESSAGE_MAX_BYTES,
                d -> Files.isDirectory(d) ? freeBytes.get() : -1,
                () -> 42L,
                passes::incrementAndGet,
                p -> !released.contains(p));
    }

    @AfterEach
    void tearDown() {
        failures.close();
        for (UnifiedLog log : logs) {
            try {
                log.close();
            } catch (IOException | RuntimeException e) {
                // a log whose dir the test removed
            }
        }
    }

    private Partition partition(Path logDir, String topic) throws IOException {
        UnifiedLog log = UnifiedLog.open(logDir.resolve(topic + "-0"), CONFIG);
        logs.add(log);
        Partition p = new Partition(topic, 0, 0, log);
        partitions.add(p);
        return p;
    }

    private List<String> offlineLines() {
        return lines.at(Level.ERROR).stream()
                .map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.startsWith(LogEvents.LOG_DIR_OFFLINE + " "))
                .toList();
    }

    private static ByteBuf batch() {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 1000);
        b.append(1000, null, new byte[] {1});
        b.close();
        return out;
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    @Test
    void healthyDirsStayOnlineAndTheAfterPassActionRunsEveryPass() throws IOException {
        Partition a = partition(d1, "a");
        assertThat(failures.checkNow()).isZero();
        assertThat(failures.checkNow()).isZero();
        assertThat(passes.get()).isEqualTo(2);
        assertThat(a.failure()).isNull();
        assertThat(failures.isOffline(d1)).isFalse();
        assertThat(offlineLines()).isEmpty();
    }

    @Test
    void anIoErrorTakesItsDirOfflineWithEveryPartitionThereAndOnlyThatDir() throws IOException {
        Partition a = partition(d1, "a");
        Partition b = partition(d2, "b");
        Partition c = partition(d2, "c");
        PartitionFailures.writeFailed(b, "append", new IOException("Input/output error"), 7);

        assertThat(failures.checkNow()).isEqualTo(1);
        assertThat(failures.isOffline(d2)).isTrue();
        assertThat(failures.isOffline(d1)).isFalse();
        assertThat(a.failure()).isNull();
        assertThat(c.failure().logDirOffline()).isTrue();
        assertThat(b.failure().logDirOffline())
                .as("replaced by the dir's failure")
                .isTrue();
        assertThat(offlineLines())
                .singleElement()
                .asString()
                .startsWith("LOG_DIR_OFFLINE dir=" + d2 + " reason=append of b-0 failed: Input/output error")
                .endsWith("partitions=[b-0, c-0]");

        // A partition hosted later on the offline dir is marked at the next pass; no second line.
        Partition late = partition(d2, "late");
        assertThat(failures.checkNow()).isZero();
        assertThat(late.failure().logDirOffline()).isTrue();
        assertThat(offlineLines()).hasSize(1);

        // Its appends are refused, with the dir's failure named.
        ByteBuf records = batch();
        try {
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> late.appendAsLeader(records)))
                    .isInstanceOf(PartitionFailedException.class)
                    .hasMessageContaining(PartitionFailure.LOG_DIR_OFFLINE);
        } finally {
            records.release();
        }
    }

    @Test
    void aNoSpaceFailureOrABugLeavesTheDirOnline() throws IOException {
        Partition full = partition(d1, "full");
        Partition bug = partition(d2, "bug");
        PartitionFailures.writeFailed(full, "append", new IOException("No space left on device"), 7);
        PartitionFailures.writeFailed(bug, "append", new IllegalStateException("a bug"), 7);
        assertThat(full.failure().noSpace()).isTrue();

        assertThat(failures.checkNow()).isZero();
        assertThat(failures.isOffline(d1)).isFalse();
        assertThat(failures.isOffline(d2)).isFalse();
        assertThat(full.failure().noSpace()).as("left to the in-place recovery").isTrue();
    }

    @Test
    void aRemovedDirOrPartitionDirGoesOffline() throws IOException {
        Partition a = partition(d1, "a");
        Partition b = partition(d2, "b");
        deleteTree(a.log().dir());
        assertThat(failures.checkNow()).isEqualTo(1);
        assertThat(failures.isOffline(d1)).isTrue();
        assertThat(offlineLines())
                .singleElement()
                .asString()
                .contains("reason=partition dir " + a.log().dir() + " is gone");

        deleteTree(d2);
        assertThat(failures.checkNow()).isEqualTo(1);
        assertThat(b.failure().logDirOffline()).isTrue();
        assertThat(offlineLines()).hasSize(2);
        assertThat(offlineLines().get(1)).startsWith("LOG_DIR_OFFLINE dir=" + d2 + " reason=the dir is gone");
        assertThat(failures.hasWritableLogDir()).isFalse();
    }

    @Test
    void aPartitionDirDeletedWithItsPartitionIsNoFailure() throws IOException {
        Partition a = partition(d1, "a");
        released.add(a); // the replica manager deletes it: the log manager let go first
        deleteTree(a.log().dir());
        assertThat(failures.checkNow()).isZero();
        assertThat(failures.isOffline(d1)).isFalse();
        assertThat(offlineLines()).isEmpty();
    }

    @Test
    void newPartitionsGoOnlyToOnlineDirsWithRoom() throws IOException {
        assertThat(failures.canPlace(d1)).isTrue();
        assertThat(failures.hasWritableLogDir()).isTrue();
        freeBytes.set(REQUIRED - 1);
        assertThat(failures.canPlace(d1)).isFalse();
        assertThat(failures.hasWritableLogDir()).isFalse();
        freeBytes.set(REQUIRED);
        assertThat(failures.canPlace(d2)).isTrue();

        Partition b = partition(d2, "b");
        PartitionFailures.writeFailed(b, "append", new IOException("Input/output error"), 7);
        failures.checkNow();
        assertThat(failures.canPlace(d2)).isFalse();
        assertThat(failures.canPlace(d1)).isTrue();
    }

    @Test
    void aNewPartitionNeedsRoomForItsTopicsIndexesAndLargestBatch() {
        int topicMaxMessageBytes = 40 << 20;
        LogConfig bigIndex = CONFIG.toBuilder().indexMaxBytes(8192).build();
        freeBytes.set(REQUIRED);
        assertThat(failures.canPlace(d1, CONFIG, LogManager.DEFAULT_MAX_BATCH_BYTES))
                .as("no topic override: message.max.bytes")
                .isTrue();
        assertThat(failures.canPlace(d1, CONFIG, topicMaxMessageBytes)).isFalse();
        assertThat(failures.canPlace(d1, bigIndex, LogManager.DEFAULT_MAX_BATCH_BYTES))
                .isFalse();

        freeBytes.set(4096 + 513 * 12 + topicMaxMessageBytes - 1);
        assertThat(failures.canPlace(d1, CONFIG, topicMaxMessageBytes)).isFalse();
        freeBytes.set(4096 + 513 * 12 + topicMaxMessageBytes);
        assertThat(failures.canPlace(d1, CONFIG, topicMaxMessageBytes)).isTrue();
        freeBytes.set(8192 + 1025 * 12 + MESSAGE_MAX_BYTES);
        assertThat(failures.canPlace(d1, bigIndex, LogManager.DEFAULT_MAX_BATCH_BYTES))
                .isTrue();
        assertThat(failures.hasWritableLogDir())
                .as("the heartbeat's flag counts the broker's defaults")
                .isTrue();
    }
}
