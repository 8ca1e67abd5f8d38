package io.stellflow.broker;

import static io.stellflow.server.common.telemetry.PrometheusScrape.scrape;
import static io.stellflow.server.common.telemetry.PrometheusScrape.value;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.telemetry.StorageMetrics;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.server.common.telemetry.PrometheusScrape.Sample;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The storage lifecycle events of a real broker ({@link LogEvents#LOG_RECOVERED}, {@link
 * LogEvents#SEGMENT_QUARANTINED}, {@link LogEvents#DISK_FULL}), read from the log lines {@link
 * StorageMetrics} writes.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class StorageEventsTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    private static final String FIRST_LOG = "00000000000000000000.log";

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @RegisterExtension
    final LogLines lines = LogLines.of(StorageMetrics.class).atLevel(Level.INFO);

    /**
     * What a kill -9 in the middle of a write leaves: no clean shutdown marker and half a batch at
     * the end of the active segment. The restarted broker recovers the partition, says so in one
     * LOG_RECOVERED line naming it and the dropped bytes, and serves every whole batch.
     */
    @Test
    void aRestartAfterAnUncleanStopLogsOneRecoveredLinePerRecoveredPartition() throws Exception {
        try (StellflowServer server = TestBroker.start(NODES.dir(), transport);
                RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "crashed", 2);
            for (int i = 0; i < 6; i++) {
                assertThat(Requests.produceOne(client, "crashed", i % 2, Requests.batch(3, 1000 + i))
                                .errorCode())
                        .isEqualTo(Errors.NONE);
            }
        }
        Path p0 = TestBroker.logDir(NODES.dir()).resolve("crashed-0");
        Files.delete(p0.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE));
        byte[] torn = Requests.batch(3, 2000);
        int tornBytes = torn.length / 2;
        try (FileChannel ch = FileChannel.open(p0.resolve(FIRST_LOG), StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(torn, 0, tornBytes));
        }
        assertThat(lines.messages(LogEvents.LOG_RECOVERED))
                .as("clean opens are not recoveries")
                .isEmpty();

        StellflowServer server = NODES.start(transport);
        try (RawClient client = new RawClient(server.port())) {
            PartitionData fetched = Requests.fetchOne(client, Requests.fetch("crashed", 0, 0, 0));
            assertThat(RecordBatchReader.decode(fetched.records(), 0)).hasSize(9);
            assertThat(Requests.produceOne(client, "crashed", 0, Requests.batch(1, 3000))
                            .baseOffset())
                    .isEqualTo(9);
        }
        assertThat(lines.messages(LogEvents.LOG_RECOVERED))
                .containsExactly("LOG_RECOVERED partition=crashed-0 dir=" + p0 + " segmentsRecovered=1 droppedBytes="
                        + tornBytes + " segmentsQuarantined=0 logEndOffset=9");
        assertThat(lines.events().stream()
                        .filter(e -> e.getFormattedMessage().startsWith(LogEvents.LOG_RECOVERED))
                        .map(ILoggingEvent::getLevel))
                .containsExactly(Level.WARN);
    }

    /**
     * A flipped byte in the second of four batches of a partition's only segment, found at the
     * restart after an unclean stop: valid batches follow it, so it is corruption, not a torn tail.
     * The broker serves the first batch, continues at its end, moved the rest to a quarantine
     * directory beside the partition, logs one SEGMENT_QUARANTINED ERROR naming file, position and
     * files, and counts the segment and bytes.
     */
    @Test
    void aCorruptBatchBeforeValidOnesIsQuarantinedLoggedAsAnErrorAndCounted() throws Exception {
        try (StellflowServer server = TestBroker.start(NODES.dir(), transport);
                RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "rotten", 1);
            for (int i = 0; i < 4; i++) {
                assertThat(Requests.produceOne(client, "rotten", 0, Requests.batch(3, 1000 + i))
                                .errorCode())
                        .isEqualTo(Errors.NONE);
            }
        }
        Path logDir = TestBroker.logDir(NODES.dir());
        Path p0 = logDir.resolve("rotten-0");
        Files.delete(p0.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE));
        Path segment = p0.resolve(FIRST_LOG);
        long size = Files.size(segment);
        int batchBytes = Requests.batch(3, 1000).length;
        assertThat(size).isEqualTo(4L * batchBytes);
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, batchBytes + 60L);
            one.put(0, (byte) (one.get(0) ^ 0x5A));
            ch.write(one.rewind(), batchBytes + 60L);
        }

        StellflowServer server = NODES.start(TestBroker.props(NODES.dir(), transport));
        try (RawClient client = new RawClient(server.port())) {
            PartitionData fetched = Requests.fetchOne(client, Requests.fetch("rotten", 0, 0, 0));
            assertThat(RecordBatchReader.decode(fetched.records(), 0)).hasSize(3);
            assertThat(Requests.produceOne(client, "rotten", 0, Requests.batch(1, 3000))
                            .baseOffset())
                    .isEqualTo(3);
            List<Sample> samples = scrape(server.metricsPort());
            assertThat(value(samples, "stellflow_log_quarantine_segment_count_total"))
                    .isEqualTo(1);
            assertThat(value(samples, "stellflow_log_quarantine_bytes_total")).isEqualTo(size - batchBytes);
        }
        List<Path> quarantines;
        try (Stream<Path> entries = Files.list(logDir)) {
            quarantines = entries.filter(d -> d.getFileName().toString().startsWith("rotten-0.")
                            && d.getFileName().toString().endsWith(".quarantine"))
                    .toList();
        }
        assertThat(quarantines).hasSize(1);
        String tail = FIRST_LOG + ".tail-" + batchBytes;
        assertThat(Files.size(quarantines.getFirst().resolve(tail))).isEqualTo(size - batchBytes);
        assertThat(lines.messages(LogEvents.SEGMENT_QUARANTINED))
                .containsExactly("SEGMENT_QUARANTINED partition=rotten-0 dir=" + p0 + " file=" + FIRST_LOG
                        + " position=" + batchBytes + " reason=CRC-32C mismatch, valid batch at position "
                        + 2 * batchBytes + " quarantineDir=" + quarantines.getFirst() + " segments=1 bytes="
                        + (size - batchBytes) + " files=" + tail);
        assertThat(lines.events().stream()
                        .filter(e -> e.getFormattedMessage().startsWith(LogEvents.SEGMENT_QUARANTINED))
                        .map(ILoggingEvent::getLevel))
                .containsExactly(Level.ERROR);
        assertThat(lines.messages(LogEvents.LOG_RECOVERED))
                .containsExactly("LOG_RECOVERED partition=rotten-0 dir=" + p0 + " segmentsRecovered=1 droppedBytes="
                        + (size - batchBytes) + " segmentsQuarantined=0 logEndOffset=3");
    }

    /**
     * A partition whose active segment is {@code /dev/full} (every write fails with ENOSPC): the
     * Produce is answered with an error (nothing acknowledged, nothing silently dropped), one
     * DISK_FULL line names the partition, and a retry is an error again without a second line.
     */
    @Test
    void aProduceOnAFullDiskIsAnErrorAndLogsDiskFullOnce() throws Exception {
        try (StellflowServer server = TestBroker.start(NODES.dir(), transport);
                RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "full", 1);
        }
        Path active = TestBroker.logDir(NODES.dir()).resolve("full-0").resolve(FIRST_LOG);
        assertThat(Files.size(active)).isZero();
        Files.delete(active);
        Files.createSymbolicLink(active, Path.of("/dev/full"));

        StellflowServer server = NODES.start(transport);
        try (RawClient client = new RawClient(server.port())) {
            PartitionResponse first = Requests.produceOne(client, "full", 0, Requests.batch(2, 1000));
            assertThat(first.errorCode()).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
            assertThat(first.baseOffset()).isEqualTo(-1L);
            PartitionResponse retry = Requests.produceOne(client, "full", 0, Requests.batch(2, 1001));
            assertThat(retry.errorCode()).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
            PartitionData fetched = Requests.fetchOne(client, Requests.fetch("full", 0, 0, 0));
            assertThat(fetched.highWatermark()).isZero();
        }
        Path partitionDir = TestBroker.logDir(NODES.dir()).resolve("full-0");
        assertThat(lines.messages(LogEvents.DISK_FULL)).hasSize(1);
        assertThat(lines.messages(LogEvents.DISK_FULL).get(0))
                .matches("DISK_FULL partition=full-0 dir=" + partitionDir + " file=" + partitionDir.resolve(FIRST_LOG)
                        + " freeBytes=\\d+ operation=append error=No space left on device");
    }
}
