package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowProducer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-dump-log.sh} on the files a real broker wrote: three one-record batches (offsets 0-2,
 * timestamps 1000-3000, an index entry per batch), dumped after a clean stop; then copies with a
 * flipped payload byte, a cut tail and a moved index entry, each reported with exit 1 and one error
 * line; a missing file, a wrong name and a missing {@code --files} fail at once.
 */
@IntegrationTest
class DumpLogCommandTest {
    private static final String SEGMENT = "00000000000000000000";

    @TempDir
    Path dir;

    private Path partitionDir;

    @BeforeEach
    void writeSegmentWithARealBroker() throws Exception {
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("transport", "nio");
        p.setProperty("metrics.exporter", "none");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("log.index.interval.bytes", "0");
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(p))) {
            Properties c = new Properties();
            c.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
            c.setProperty("acks", "1");
            try (StellflowAdmin admin = new StellflowAdmin(c)) {
                admin.createTopic("dump", 1);
            }
            try (StellflowProducer producer = new StellflowProducer(c)) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord("dump", 0, bytes("k" + i), bytes("value" + i), 1000L * (i + 1)))
                            .get(10, TimeUnit.SECONDS);
                }
            }
        }
        partitionDir = dir.resolve("data").resolve("dump-0");
    }

    private static ToolRun run(String... args) {
        return ToolRun.run(OneLineUsageErrors.commandLine(new DumpLogCommand()), args);
    }

    @Test
    void dumpsBatchesRecordsAndIndexesOfASoundSegment() {
        Path log = partitionDir.resolve(SEGMENT + ".log");
        ToolRun batches = run("--files", log.toString());
        assertThat(batches.exit()).as(batches.err()).isZero();
        assertThat(batches.err()).isEmpty();
        String[] lines = batches.out().split("\n");
        assertThat(lines[0]).isEqualTo("Dumping " + log);
        assertThat(lines[1]).isEqualTo("Starting offset: 0");
        int position = 0;
        for (int i = 0; i < 3; i++) {
            assertThat(lines[2 + i])
                    .startsWith("baseOffset: " + i + " lastOffset: " + i + " count: 1 position: " + position
                            + " leaderEpoch: 0 baseTimestamp: " + 1000 * (i + 1) + " maxTimestamp: " + 1000 * (i + 1)
                            + " size: ")
                    .endsWith(" compression: none producerId: -1 crcValid: true");
            position += Integer.parseInt(lines[2 + i].replaceAll(".* size: (\\d+) .*", "$1"));
        }
        assertThat(lines[5]).isEqualTo("Batches: 3, valid bytes: " + position + " of " + position);
        assertThat(lines).hasSize(6);

        ToolRun deep = run("--deep-iteration", "--files", log.toString());
        assertThat(deep.exit()).isZero();
        assertThat(deep.out()).contains("| offset: 1 timestamp: 2000 keySize: 2 valueSize: 6 headerKeys: []\n");
        assertThat(deep.out()).doesNotContain("payload");

        ToolRun data = run("--print-data-log", "--files", log.toString());
        assertThat(data.exit()).isZero();
        assertThat(data.out())
                .contains(
                        "| offset: 2 timestamp: 3000 keySize: 2 valueSize: 6 headerKeys: [] key: k2 payload: value2\n");

        Path index = partitionDir.resolve(SEGMENT + ".index");
        Path timeIndex = partitionDir.resolve(SEGMENT + ".timeindex");
        ToolRun indexes = run("--files", index + "," + timeIndex);
        assertThat(indexes.exit()).as(indexes.out() + indexes.err()).isZero();
        assertThat(indexes.out())
                .contains("offset: 0 position: 0\noffset: 1 position: ")
                .contains(SEGMENT + ".index passed the check against " + SEGMENT + ".log: 3 entries\n")
                .contains("timestamp: 1000 offset: 0\ntimestamp: 2000 offset: 1\ntimestamp: 3000 offset: 2\n")
                .contains(SEGMENT + ".timeindex passed the check against " + SEGMENT + ".log: 3 entries\n");

        ToolRun sanity = run("--index-sanity-check", "--files", index.toString());
        assertThat(sanity.exit()).isZero();
        assertThat(sanity.out())
                .isEqualTo("Dumping " + index + "\n" + SEGMENT + ".index passed the check against " + SEGMENT
                        + ".log: 3 entries\n");
    }

    @Test
    void preallocatedZeroIndexesOfAnActiveSegmentHaveNoEntriesAndPassTheCheck() throws Exception {
        // A live segment holding one batch, smaller than log.index.interval.bytes: both indexes are
        // still their preallocated zeros (a copy of an active segment, or a crashed broker's files).
        Path copy = Files.createDirectories(dir.resolve("active"));
        Path log = copy.resolve(SEGMENT + ".log");
        byte[] all = Files.readAllBytes(partitionDir.resolve(SEGMENT + ".log"));
        int firstBatchBytes = 12 + ByteBuffer.wrap(all).getInt(8);
        Files.write(log, java.util.Arrays.copyOf(all, firstBatchBytes));
        Path index = copy.resolve(SEGMENT + ".index");
        Path timeIndex = copy.resolve(SEGMENT + ".timeindex");
        Files.write(index, new byte[8 * 16]);
        Files.write(timeIndex, new byte[12 * 10]);

        ToolRun dump = run("--files", index + "," + timeIndex);
        assertThat(dump.exit()).as(dump.out() + dump.err()).isZero();
        assertThat(dump.err()).isEmpty();
        assertThat(dump.out())
                .isEqualTo("Dumping " + index + "\n"
                        + "(16 empty preallocated slots follow: an active segment's index)\n"
                        + SEGMENT + ".index passed the check against " + SEGMENT + ".log: 0 entries\n"
                        + "Dumping " + timeIndex + "\n"
                        + "(10 empty preallocated slots follow: an active segment's index)\n"
                        + SEGMENT + ".timeindex passed the check against " + SEGMENT + ".log: 0 entries\n");

        // A real entry before the zeros is still shown and checked, the zeros after it are not.
        try (FileChannel ch = FileChannel.open(index, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).putInt(0, 0).putInt(4, 0), 0);
            ch.write(ByteBuffer.allocate(8).putInt(0, 1).putInt(4, 7), 8); // no batch at position 7
        }
        ToolRun bad = run("--files", index.toString());
        assertThat(bad.exit()).isEqualTo(1);
        assertThat(bad.out())
                .contains("offset: 0 position: 0\noffset: 1 position: 7\n(14 empty preallocated slots")
                .contains("Mismatch: entry 1 (offset 1, position 7): no batch starts at position 7");
    }

    @Test
    void damagedFilesAreReportedWithExitOne() throws Exception {
        Path copy = Files.createDirectories(dir.resolve("copy"));
        for (String suffix : new String[] {".log", ".index", ".timeindex"}) {
            Files.copy(partitionDir.resolve(SEGMENT + suffix), copy.resolve(SEGMENT + suffix));
        }
        Path log = copy.resolve(SEGMENT + ".log");
        long size = Files.size(log);

        // the last batch ends with its value "value2" and a 4-byte header count: flip the value's last byte
        flipByte(log, size - 5);
        ToolRun crc = run("--deep-iteration", "--files", log.toString());
        assertThat(crc.exit()).isEqualTo(1);
        assertThat(crc.out()).contains("baseOffset: 2 lastOffset: 2").contains("crcValid: false");
        assertThat(crc.out()).contains("crcValid: true").contains("| offset: 2 timestamp: 3000");
        assertThat(crc.err()).isEqualTo("error: " + log + ": 1 batch(es) whose CRC does not match\n");
        flipByte(log, size - 1);

        Path index = copy.resolve(SEGMENT + ".index");
        try (FileChannel ch = FileChannel.open(index, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).putInt(0, 5), 8 + 4); // entry 1 now points at position 5
        }
        ToolRun moved = run("--index-sanity-check", "--files", index.toString());
        assertThat(moved.exit()).isEqualTo(1);
        assertThat(moved.out()).contains("Mismatch: entry 1 (offset 1, position 5): no batch starts at position 5\n");
        assertThat(moved.err()).isEqualTo("error: " + index + ": 1 index problem(s)\n");

        try (FileChannel ch = FileChannel.open(log, StandardOpenOption.WRITE)) {
            ch.truncate(size - 3);
        }
        ToolRun cut = run("--files", log.toString());
        assertThat(cut.exit()).isEqualTo(1);
        assertThat(cut.out()).contains("Batches: 2, valid bytes: ");
        assertThat(cut.err()).startsWith("error: " + log + ": damaged tail: batchLength ");
        assertThat(cut.err().strip().lines()).hasSize(1);
    }

    @Test
    void badInputFailsWithOneLineWithinSeconds() throws Exception {
        long startNs = System.nanoTime();
        Path missing = dir.resolve("00000000000000000042.log");
        ToolRun none = run("--files", missing.toString());
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).isEqualTo("error: " + missing + ": no such file\n");

        Path wrong = Files.writeString(dir.resolve("notes.txt"), "x");
        ToolRun named = run("--files", wrong.toString());
        assertThat(named.exit()).isEqualTo(1);
        assertThat(named.err())
                .isEqualTo("error: " + wrong + " is not a segment file (<20-digit base offset>.log, .index,"
                        + " .timeindex or .txnindex)\n");

        ToolRun noFiles = run("--deep-iteration");
        assertThat(noFiles.exit()).isEqualTo(2);
        assertThat(noFiles.err()).startsWith("error: Missing required option: '--files");
        assertThat(noFiles.err().strip().lines()).hasSize(2).endsWith(OneLineUsageErrors.HINT);
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
    }

    private static void flipByte(Path file, long position) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, position);
            b.put(0, (byte) (b.get(0) ^ 0x5a)).rewind();
            ch.write(b, position);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
