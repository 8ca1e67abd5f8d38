package io.stellflow.broker.topic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import ch.qos.logback.classic.Level;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DiskFullRecovery} on a fake clock and a fake free-space reading, over partitions with real
 * logs whose appends really fail with {@code ENOSPC}: the active segment's file is a symbolic link
 * to {@code /dev/full} until the test "frees space" by replacing it with a real file. The timing: the
 * first check comes {@code retryMs} after the failure, then one every {@code retryMs}; the recovery
 * needs room for the indexes and a batch (the topic's {@code max.message.bytes} when it sets one);
 * only no-space failures are retried; one {@code PARTITION_RECOVERED} line per recovery.
 */
class DiskFullRecoveryTest {
    private static final long RETRY_MS = 500;
    /** The broker's {@code message.max.bytes}. */
    private static final int BATCH_BYTES = 1000;

    private static final LogConfig CONFIG =
            LogConfig.builder().indexMaxBytes(4096).build();
    /** What a recovery needs: the offset index (4096), the time index (513 entries of 12 bytes), a batch. */
    private static final long REQUIRED = 4096 + 513 * 12 + BATCH_BYTES;

    @TempDir
    Path dir;

    private final AtomicLong clockMs = new AtomicLong(10_000);
    private final AtomicLong freeBytes = new AtomicLong(0);
    private final AtomicInteger freeSpaceReads = new AtomicInteger();
    private final List<Partition> partitions = new ArrayList<>();
    private final List<UnifiedLog> logs = new ArrayList<>();

    @RegisterExtension
    final LogLines lines = LogLines.of(DiskFullRecovery.class);

    private DiskFullRecovery recovery;

    @BeforeEach
    void setUp() {
        recovery = new DiskFullRecovery(
                action -> partitions.forEach(action),
                RETRY_MS,
                BATCH_BYTES,
                d -> {
                    freeSpaceReads.incrementAndGet();
                    return freeBytes.get();
                },
                clockMs::get);
    }

    @AfterEach
    void tearDown() throws IOException {
        recovery.close();
        for (UnifiedLog log : logs) {
            log.close();
        }
    }

    /** A partition whose active segment file is {@code /dev/full}: every append fails with ENOSPC. */
    private Partition onFullDisk(String name) throws IOException {
        Path logDir = dir.resolve(name + "-0");
        UnifiedLog.open(logDir, CONFIG).close();
        Path active = logDir.resolve("00000000000000000000.log");
        Files.delete(active);
        Files.createSymbolicLink(active, Path.of("/dev/full"));
        UnifiedLog log = UnifiedLog.open(logDir, CONFIG);
        logs.add(log);
        Partition p = new Partition(name, 0, 0, log);
        partitions.add(p);
        return p;
    }

    /** Frees the space: the active segment becomes a real (empty) file. */
    private static void freeSpace(Partition p) throws IOException {
        Path active = p.log().dir().resolve("00000000000000000000.log");
        Files.delete(active);
        Files.createFile(active);
    }

    private static ByteBuf batch(long timestampMs) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, timestampMs);
        b.append(timestampMs, null, new byte[] {1, 2, 3});
        b.close();
        return out;
    }

    /** A Produce as the append path handles it: a failed write fails the partition (at the clock's time). */
    private Throwable produce(Partition p) {
        ByteBuf b = batch(clockMs.get());
        try {
            p.appendAsLeader(b);
            return null;
        } catch (IOException e) {
            PartitionFailures.writeFailed(p, "append", e, clockMs.get());
            return e;
        } finally {
            b.release();
        }
    }

    private List<String> recoveredLines() {
        return lines.messages(LogEvents.PARTITION_RECOVERED);
    }

    @Test
    void checksRetryMsAfterTheFailureThenEveryRetryMsAndRecoversOnceThereIsRoom() throws IOException {
        Partition p = onFullDisk("t");
        assertThat(produce(p)).isInstanceOf(IOException.class);
        PartitionFailure failure = p.failure();
        assertThat(failure.noSpace()).isTrue();
        assertThat(recovery.requiredFreeBytes(p)).isEqualTo(REQUIRED);
        assertThat(failure.atMs()).isEqualTo(10_000);

        clockMs.set(10_000 + RETRY_MS - 1);
        assertThat(recovery.checkNow()).isZero();
        assertThat(freeSpaceReads).as("not due yet").hasValue(0);

        clockMs.set(10_000 + RETRY_MS);
        freeBytes.set(REQUIRED - 1);
        assertThat(recovery.checkNow()).isZero();
        assertThat(freeSpaceReads).as("due: the space is checked").hasValue(1);
        assertThat(p.failure()).as("too little room: still failed").isSameAs(failure);

        freeSpace(p);
        freeBytes.set(REQUIRED);
        clockMs.set(10_000 + 2 * RETRY_MS - 1);
        assertThat(recovery.checkNow()).isZero();
        assertThat(freeSpaceReads)
                .as("the next check is one retry interval later")
                .hasValue(1);
        assertThat(produce(p)).as("still refused before the recovery").isInstanceOf(PartitionFailedException.class);
        assertThat(p.failure()).isSameAs(failure);

        clockMs.set(10_000 + 2 * RETRY_MS);
        assertThat(recovery.checkNow()).isEqualTo(1);
        assertThat(p.failure()).isNull();
        assertThat(produce(p)).as("appends resume").isNull();
        assertThat(p.logEndOffset()).isEqualTo(1);
        assertThat(p.highWatermark()).isEqualTo(1);
        assertThat(recoveredLines())
                .containsExactly("PARTITION_RECOVERED partition=t-0 dir="
                        + p.log().dir() + " role=leader operation=append downMs=1000 freeBytes=" + REQUIRED
                        + " logEndOffset=0");

        clockMs.set(10_000 + 10 * RETRY_MS);
        assertThat(recovery.checkNow()).as("nothing left to recover").isZero();
        assertThat(freeSpaceReads).hasValue(2);
    }

    @Test
    void theRoomARecoveryWaitsForCountsTheTopicsLargerMaxMessageBytes() throws IOException {
        int topicMaxMessageBytes = 40 << 20;
        long indexBytes = 4096 + 513 * 12;
        Partition plain = onFullDisk("plain");
        Partition large = onFullDisk("large");
        large.topicMaxMessageBytes(topicMaxMessageBytes);
        assertThat(recovery.requiredFreeBytes(plain)).isEqualTo(indexBytes + BATCH_BYTES);
        assertThat(recovery.requiredFreeBytes(large))
                .as("40 MiB topic max.message.bytes, not the broker's 1000-byte message.max.bytes")
                .isEqualTo(indexBytes + topicMaxMessageBytes);
        assertThat(DiskFullRecovery.requiredFreeBytes(LogConfig.defaults(), 1_048_588))
                .as("at the defaults: 10 MiB offset index, 15 MiB time index, 1 MiB batch")
                .isEqualTo(26L * 1024 * 1024 + 24);

        assertThat(produce(plain)).isInstanceOf(IOException.class);
        assertThat(produce(large)).isInstanceOf(IOException.class);
        freeSpace(plain);
        freeSpace(large);
        freeBytes.set(indexBytes + topicMaxMessageBytes - 1);
        clockMs.addAndGet(RETRY_MS);
        assertThat(recovery.checkNow())
                .as("room for the plain topic's batch only")
                .isEqualTo(1);
        assertThat(plain.failure()).isNull();
        assertThat(large.failure()).isNotNull();

        freeBytes.set(indexBytes + topicMaxMessageBytes);
        clockMs.addAndGet(RETRY_MS);
        assertThat(recovery.checkNow()).isEqualTo(1);
        assertThat(large.failure()).isNull();
        assertThat(produce(large)).as("appends resume").isNull();
    }

    @Test
    void aPartitionThatFailsAgainStartsANewEpisode() throws IOException {
        Partition p = onFullDisk("t");
        produce(p);
        freeBytes.set(REQUIRED);
        clockMs.addAndGet(RETRY_MS);
        // Recovered, but the disk is still full: the next append fails again, a new failure.
        assertThat(recovery.checkNow()).isEqualTo(1);
        clockMs.addAndGet(100);
        assertThat(produce(p)).isInstanceOf(IOException.class);
        PartitionFailure second = p.failure();
        assertThat(second.atMs()).isEqualTo(clockMs.get());

        clockMs.addAndGet(RETRY_MS - 1);
        assertThat(recovery.checkNow())
                .as("first check of the new episode: retryMs after it")
                .isZero();
        freeSpace(p);
        clockMs.addAndGet(1);
        assertThat(recovery.checkNow()).isEqualTo(1);
        assertThat(produce(p)).isNull();
        assertThat(recoveredLines()).hasSize(2);
    }

    @Test
    void onlyNoSpaceFailuresAreRetried() throws IOException {
        Partition dead = new Partition("dead", 0, 0, UnifiedLog.open(dir.resolve("dead-0"), CONFIG));
        logs.add(dead.log());
        partitions.add(dead);
        PartitionFailures.writeFailed(dead, "append", new IOException("Input/output error"), clockMs.get());
        assertThat(dead.failure().noSpace()).isFalse();
        freeBytes.set(Long.MAX_VALUE);

        clockMs.addAndGet(100 * RETRY_MS);
        assertThat(recovery.checkNow()).isZero();
        assertThat(freeSpaceReads)
                .as("a dead disk is left to the log dir's failure handling")
                .hasValue(0);
        assertThat(dead.failure()).isNotNull();
    }

    @Test
    void aFollowerRecoversAsFollowerAndTakesTheFetchersAppends() throws IOException {
        Partition p = onFullDisk("t");
        p.becomeFollower(2, 7);
        Throwable failed = catchThrowable(() -> p.runIfFollowing(7, () -> appendAsFollower(p.log())));
        assertThat(failed).isNotNull();
        PartitionFailures.writeFailed(p, "follower-append", failed, clockMs.get());
        assertThat(p.failure().noSpace()).isTrue();

        freeSpace(p);
        freeBytes.set(REQUIRED);
        clockMs.addAndGet(RETRY_MS);
        assertThat(recovery.checkNow()).isEqualTo(1);

        assertThat(p.isLeader()).isFalse();
        assertThat(p.leaderEpoch()).isEqualTo(7);
        assertThat(p.runIfFollowing(7, () -> appendAsFollower(p.log()))).isTrue();
        assertThat(p.logEndOffset()).isEqualTo(1);
        assertThat(recoveredLines()).singleElement().asString().contains("role=follower operation=follower-append");
    }

    @Test
    void aRecoveryThatFailsIsLoggedOnceAndRetried() throws IOException {
        Partition p = onFullDisk("t");
        produce(p);
        freeBytes.set(REQUIRED);
        // The log cannot be loaded while a file stands in place of its directory.
        Path logDir = p.log().dir();
        Path aside = dir.resolve("aside");
        Files.move(logDir, aside);
        Files.createFile(logDir);
        for (int i = 1; i <= 3; i++) {
            clockMs.addAndGet(RETRY_MS);
            assertThat(recovery.checkNow()).isZero();
        }
        assertThat(lines.at(Level.WARN)).as("one WARN per episode").hasSize(1);
        Files.delete(logDir);
        Files.move(aside, logDir);
        freeSpace(p);
        clockMs.addAndGet(RETRY_MS);
        assertThat(recovery.checkNow()).isEqualTo(1);
        assertThat(produce(p)).isNull();
    }

    private static void appendAsFollower(UnifiedLog log) {
        ByteBuf b = batch(1000);
        b.setInt(8, 7); // partitionLeaderEpoch, as the leader stamped it
        try {
            log.appendAsFollower(b, 0);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            b.release();
        }
    }
}
