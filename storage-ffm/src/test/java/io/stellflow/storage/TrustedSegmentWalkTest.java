package io.stellflow.storage;

import static io.stellflow.storage.TestBatches.offsets;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A trusted segment (clean shutdown) whose batch headers do not chain is recovered instead of
 * walked: the open used to loop forever on a batchLength of -8 (found by {@code RecoveryFuzzTest}:
 * the epoch rebuild walk and the tail walk added {@code 8 + batchLength} bytes per step).
 */
class TrustedSegmentWalkTest {
    @TempDir
    Path dir;

    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);
    private static final Path FIRST_LOG = Path.of("00000000000000000000.log");

    /** Three single-record batches, closed cleanly; returns each batch's file position. */
    private List<Integer> writeThreeAndClose() throws IOException {
        List<Integer> positions = new ArrayList<>();
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            int pos = 0;
            for (int i = 0; i < 3; i++) {
                ByteBuf b = TestBatches.batch(1000 + i);
                positions.add(pos);
                pos += b.readableBytes();
                log.appendAsLeader(b, 1);
                b.release();
            }
        }
        assertThat(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE)).exists();
        return positions;
    }

    private static void setBatchLength(Path file, int position, int batchLength) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(
                    ByteBuffer.allocate(4).putInt(0, batchLength),
                    position + (long) RecordBatchLayout.BATCH_LENGTH_OFFSET);
        }
    }

    private void reopenKeepsBatchesBelow(int kept) {
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
                assertThat(log.logEndOffset()).isEqualTo(kept);
                ByteBuf next = TestBatches.batch(5000);
                assertThat(log.appendAsLeader(next, 2)).isEqualTo(kept);
                next.release();
                ByteBuf out = Unpooled.buffer();
                try {
                    log.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
                    List<Long> expected = new ArrayList<>();
                    for (long o = 0; o <= kept; o++) {
                        expected.add(o);
                    }
                    assertThat(offsets(TestBatches.decode(out, 0))).isEqualTo(expected);
                } finally {
                    out.release();
                }
            }
        });
    }

    @Test
    void aNegativeBatchLengthInATrustedSegmentWithoutEpochFileIsRecoveredNotWalkedForever() throws IOException {
        List<Integer> positions = writeThreeAndClose();
        setBatchLength(dir.resolve(FIRST_LOG), positions.get(1), -RecordBatchLayout.LOG_OVERHEAD);
        Files.delete(dir.resolve(LeaderEpochCache.FILE_NAME)); // the open rebuilds epochs by walking
        reopenKeepsBatchesBelow(1);
    }

    @Test
    void aZeroBatchLengthInATrustedSegmentWithoutEpochFileIsRecovered() throws IOException {
        List<Integer> positions = writeThreeAndClose();
        setBatchLength(dir.resolve(FIRST_LOG), positions.get(1), 0);
        Files.delete(dir.resolve(LeaderEpochCache.FILE_NAME));
        reopenKeepsBatchesBelow(1);
    }

    @Test
    void aNegativeBatchLengthAtTheTrustedTailIsRecoveredNotWalkedForever() throws IOException {
        List<Integer> positions = writeThreeAndClose();
        setBatchLength(
                dir.resolve(FIRST_LOG),
                positions.get(2),
                -RecordBatchLayout.LOG_OVERHEAD); // the tail walk starts at the last index entry
        reopenKeepsBatchesBelow(2);
    }
}
