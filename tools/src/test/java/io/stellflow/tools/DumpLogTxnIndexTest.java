package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-dump-log.sh} on {@code .txnindex} files written by the layout of {@code
 * AbortedTxnIndexLayout} (34-byte entries: version, producerId, firstOffset, lastOffset,
 * lastStableOffset): one line per aborted transaction; a torn last entry, an entry of an unknown
 * version and an entry out of order are each reported with exit 1, never a crash, and the sound
 * entries are still printed.
 */
class DumpLogTxnIndexTest {
    private static final int ENTRY = 34;

    @TempDir
    Path dir;

    private static ToolRun run(String... args) {
        return ToolRun.run(OneLineUsageErrors.commandLine(new DumpLogCommand()), args);
    }

    private static byte[] entries(long[]... rows) {
        ByteBuffer b = ByteBuffer.allocate(rows.length * ENTRY);
        for (long[] r : rows) {
            b.putShort((short) r[0]).putLong(r[1]).putLong(r[2]).putLong(r[3]).putLong(r[4]);
        }
        return b.array();
    }

    @Test
    void printsOneLinePerAbortedTransaction() throws Exception {
        // The layout's worked example (producer 7, 100..105, LSO 106) and one more, in segment 100.
        Path file = Files.write(
                dir.resolve("00000000000000000100.txnindex"),
                entries(new long[] {0, 7, 100, 105, 106}, new long[] {0, 9, 104, 110, 108}));
        ToolRun r = run("--files", file.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out())
                .isEqualTo("Dumping " + file + "\n"
                        + "producerId: 7 firstOffset: 100 lastOffset: 105 lastStableOffset: 106\n"
                        + "producerId: 9 firstOffset: 104 lastOffset: 110 lastStableOffset: 108\n"
                        + "Aborted transactions: 2\n");
    }

    /**
     * Transaction markers in a {@code .log}: with {@code --deep-iteration} each control batch prints
     * its marker (type, producer, epochs, transaction sequence) instead of failing to decode as data.
     */
    @Test
    void markersInALogArePrintedWithTheirType() throws Exception {
        ByteBuf buf = Unpooled.buffer();
        try {
            ControlRecordLayout.write(buf, ControlRecordLayout.BEGIN, 7, (short) 2, -1, 9, 1000);
            int second = buf.writerIndex();
            ControlRecordLayout.write(buf, ControlRecordLayout.COMMIT, 7, (short) 2, 5, 9, 2000);
            RecordBatchLayout.setBaseOffsetDelta(buf, second, 1);
            byte[] bytes = new byte[buf.readableBytes()];
            buf.getBytes(0, bytes);
            Path file = Files.write(dir.resolve("00000000000000000040.log"), bytes);
            ToolRun r = run("--deep-iteration", "--files", file.toString());
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out())
                    .contains("| offset: 40 marker: BEGIN producerId: 7 producerEpoch: 2 coordinatorEpoch: -1"
                            + " transactionSequence: 9\n")
                    .contains("| offset: 41 marker: COMMIT producerId: 7 producerEpoch: 2 coordinatorEpoch: 5"
                            + " transactionSequence: 9\n")
                    .doesNotContain("not decoded");
        } finally {
            buf.release();
        }
    }

    @Test
    void anEmptyFileHasNoEntries() throws Exception {
        Path file = Files.write(dir.resolve("00000000000000000000.txnindex"), new byte[0]);
        ToolRun r = run("--files", file.toString());
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("Dumping " + file + "\nAborted transactions: 0\n");
    }

    @Test
    void aTornLastEntryIsReportedAfterTheWholeOnes() throws Exception {
        byte[] two = entries(new long[] {0, 7, 100, 105, 106}, new long[] {0, 9, 104, 110, 111});
        Path file = Files.write(dir.resolve("00000000000000000100.txnindex"), Arrays.copyOf(two, ENTRY + 20)); // cut
        ToolRun r = run("--files", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.out())
                .isEqualTo("Dumping " + file + "\n"
                        + "producerId: 7 firstOffset: 100 lastOffset: 105 lastStableOffset: 106\n"
                        + "Damaged: torn entry: 20 trailing byte(s) after 1 whole 34-byte entries (dropped when the"
                        + " broker opens the log)\n"
                        + "Aborted transactions: 1\n");
        assertThat(r.err()).isEqualTo("error: " + file + ": 1 txnindex problem(s)\n");
    }

    @Test
    void damagedAndOutOfOrderEntriesAreReportedAndTheOthersPrinted() throws Exception {
        Path file = Files.write(
                dir.resolve("00000000000000000100.txnindex"),
                entries(
                        new long[] {0, 7, 100, 105, 106},
                        new long[] {3, 8, 106, 107, 108}, // unknown version
                        new long[] {0, 9, 101, 104, 105}, // its marker before the previous one's
                        new long[] {0, 5, 50, 90, 91})); // before 105 too
        ToolRun r = run("--files", file.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.out())
                .contains("producerId: 7 firstOffset: 100 lastOffset: 105 lastStableOffset: 106\n")
                .contains("Damaged: entry 1 at byte 34 is not a valid version-0 entry (version 3)\n")
                .contains("Damaged: entry 2 at byte 68: lastOffset 104 is not after 105\n")
                .contains("producerId: 9 firstOffset: 101 lastOffset: 104 lastStableOffset: 105\n")
                .endsWith("Aborted transactions: 3\n");
        assertThat(r.err()).isEqualTo("error: " + file + ": 3 txnindex problem(s)\n");
    }
}
