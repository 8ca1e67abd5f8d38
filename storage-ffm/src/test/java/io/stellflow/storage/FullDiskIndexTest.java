package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.server.common.file.SmallTmpfs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The fault of issue #23 on a real small file system: the disk is at 0 bytes free, the next batch
 * still fits in the log's last (allocated) page, but its index entry is the first of a new page of
 * the offset index (or of the time index). The index files are allocated before they are mapped,
 * so that entry lands in an allocated page: the append succeeds, and when the disk is really out of
 * room the appends fail with an {@link IOException} (a roll cannot allocate its indexes, or the log
 * cannot grow), never with an {@link InternalError} from a write into the mapping. Once space is
 * freed the log recovers in place ({@link UnifiedLog#reopen}) and takes appends again.
 */
class FullDiskIndexTest {
    private static final int PAGE = 4096;

    /**
     * One index entry per batch; 4 KiB indexes: 512 offset entries, 342 time entries per segment. No
     * preallocation: the log's own pages run out exactly where these tests put the full disk
     * ({@link LogPreallocationTest} covers a full disk with the reservation).
     */
    private static final LogConfig CONFIG = LogConfig.builder()
            .indexIntervalBytes(0)
            .indexMaxBytes(4 * PAGE)
            .segmentBytes(1 << 20)
            .preallocate(false)
            .build();

    /** Timestamps with the same number of digits, so every one-record batch has the same size. */
    private static ByteBuf batch(int i) {
        return TestBatches.batch(1_000_000L + i);
    }

    @Test
    void aBatchWhoseOffsetIndexEntryStartsANewPageIsAppendedAtZeroBytesFree() throws Exception {
        // Offset index entries are 8 bytes: entry 512 is the first of the index's second page.
        appendAtZeroFreeWhenTheIndexNeedsANewPage(PAGE / OffsetIndexLayout.ENTRY_SIZE);
    }

    @Test
    void aBatchWhoseTimeIndexEntryCrossesIntoANewPageIsAppendedAtZeroBytesFree() throws Exception {
        // Time index entries are 12 bytes: entry 341 covers bytes 4092-4103, the first bytes of page 2.
        appendAtZeroFreeWhenTheIndexNeedsANewPage(PAGE / TimeIndexLayout.ENTRY_SIZE);
    }

    private void appendAtZeroFreeWhenTheIndexNeedsANewPage(int entriesBefore) throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(2 << 20)) {
            Path dir = fs.dir().resolve("t-0");
            ByteBuf probe = batch(0);
            int batchBytes = probe.readableBytes();
            probe.release();
            try (UnifiedLog log = UnifiedLog.open(dir, CONFIG)) {
                // A first batch sized so that the log's last page has room for the next batch.
                int logBytes = (entriesBefore - 1) * batchBytes;
                int pad = PAGE - (logBytes % PAGE) - 2 * batchBytes;
                ByteBuf first = TestBatches.sized(1, Math.max(pad, 1) + (pad < 1 ? PAGE : 0));
                log.appendAsLeader(first, 0);
                first.release();
                for (int i = 1; i < entriesBefore; i++) {
                    ByteBuf b = batch(i);
                    log.appendAsLeader(b, 0);
                    b.release();
                }
                long segmentBytes = log.activeSegmentSizeBytes();
                assertThat(PAGE - segmentBytes % PAGE)
                        .as("room in the log's last page")
                        .isGreaterThan(batchBytes);

                fs.fill(fs.dir().resolve("filler"));
                assertThat(fs.usableBytes()).as("the disk is full").isZero();

                ByteBuf next = batch(entriesBefore);
                long base = log.appendAsLeader(next, 0);
                next.release();
                assertThat(base).isEqualTo(entriesBefore);

                // Keep writing at 0 bytes free: the log's page fills, then the appends fail cleanly.
                Throwable failure = null;
                for (int i = entriesBefore + 1; i < entriesBefore + 200 && failure == null; i++) {
                    ByteBuf b = batch(i);
                    failure = catchThrowable(() -> log.appendAsLeader(b, 0));
                    b.release();
                }
                assertThat(failure).isInstanceOf(IOException.class);
                assertThat(StorageErrors.isNoSpace(failure)).isTrue();

                // Free the space: the log recovers in place and takes appends again.
                Files.delete(fs.dir().resolve("filler"));
                long end = log.reopen();
                assertThat(end).isGreaterThan(entriesBefore);
                ByteBuf more = batch(100_000);
                assertThat(log.appendAsLeader(more, 0)).isEqualTo(end);
                more.release();
            }
            // Earlier data intact: reopen (recovery), read every acknowledged batch.
            try (UnifiedLog reopened = UnifiedLog.open(dir, CONFIG)) {
                assertThat(reopened.logEndOffset()).isGreaterThan(entriesBefore + 1);
                ByteBuf out = Unpooled.buffer();
                reopened.readInto(0, Integer.MAX_VALUE, reopened.logEndOffset(), true, out);
                assertThat(TestBatches.decode(out, 0)).hasSize((int) reopened.logEndOffset());
                out.release();
            }
        }
    }

    @Test
    void aRollThatCannotAllocateItsIndexesFailsWithAnIOException() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(1 << 20)) {
            Path dir = fs.dir().resolve("t-0");
            LogConfig smallSegments = CONFIG.toBuilder().segmentBytes(2 * PAGE).build();
            try (UnifiedLog log = UnifiedLog.open(dir, smallSegments)) {
                ByteBuf b0 = TestBatches.sized(1, PAGE);
                log.appendAsLeader(b0, 0);
                b0.release();
                fs.fill(fs.dir().resolve("filler"));
                ByteBuf b1 = TestBatches.sized(1, PAGE + 100); // does not fit: rolls
                Throwable failure = catchThrowable(() -> log.appendAsLeader(b1, 0));
                b1.release();
                assertThat(failure).isInstanceOf(IOException.class);
                assertThat(StorageErrors.isNoSpace(failure)).isTrue();
                // Sealing segment 0 trims its indexes and frees their pages, so one of the new indexes
                // may still fit: the first that does not names itself.
                assertThat(StorageErrors.fileOf(failure)).matches(".*/t-0/00000000000000000001\\.(time)?index");
                assertThat(log.logEndOffset()).isEqualTo(1);
            }
        }
    }
}
