package io.stellflow.broker;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.fetch.FetchReader;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fetch v0 of compressed stored batches (issue #21) keeps the §6.4 size limits on the bytes it
 * sends, which are the decompressed sizes: a partition stops before the batch that would take it
 * past {@code partitionMaxBytes}, the response before the one past {@code maxBytes}, with decision
 * 9.g's exemptions for first batches; the rest comes with the next Fetch. A stored batch that
 * decompresses to more than a whole response can hold is answered {@code MESSAGE_TOO_LARGE} (not
 * retriable) with one WARN line, and Fetch v1 still serves it as stored.
 */
@IntegrationTest
class FetchV0CompressedLimitsTest {
    private static final String TRANSPORT = "nio";
    private static final int BATCH_RECORDS = 100;

    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @RegisterExtension
    final LogLines fetchLog = LogLines.of(FetchReader.class);

    private String t;

    @BeforeEach
    void name(TestInfo test) {
        t = test.getTestMethod().orElseThrow().getName();
    }

    /** Batch {@code k} holds offsets {@code 100k..100k+99}; uncompressed, it is {@code plain(k)}. */
    private static byte[] plain(int k) {
        return CompressedProduceTest.plainBatch(BATCH_RECORDS, k * BATCH_RECORDS);
    }

    /** Produces batches 0..codecs.length-1, batch k compressed with codecs[k] (NONE: stored plain). */
    private static void produce(RawClient client, String topic, int partition, CompressionType... codecs)
            throws IOException {
        for (int k = 0; k < codecs.length; k++) {
            byte[] batch =
                    codecs[k] == CompressionType.NONE ? plain(k) : CompressedProduceTest.compress(plain(k), codecs[k]);
            assertThat(Requests.produceOne(client, topic, partition, batch).errorCode())
                    .isEqualTo(Errors.NONE);
        }
    }

    private static FetchRequest fetch(String topic, long[] offsets, int maxBytes, int partitionMaxBytes) {
        List<FetchPartition> partitions = new ArrayList<>();
        for (int p = 0; p < offsets.length; p++) {
            partitions.add(new FetchPartition(p, -1, offsets[p], -1L, partitionMaxBytes));
        }
        return new FetchRequest(-1, 0, 1, maxBytes, (byte) 0, 0, List.of(new FetchTopic(topic, partitions)));
    }

    private static List<FetchResponse.PartitionData> fetchV0(RawClient client, FetchRequest request)
            throws IOException {
        RawClient.Response r = client.call(ApiKeys.FETCH, 11, request);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return FetchResponse.read(r.body()).responses().get(0).partitions();
    }

    /**
     * The batches of a v0 answer to a Fetch at {@code from}, checked as an SDK reads them
     * (uncompressed, CRC good, offsets following each other from the start of the batch holding
     * {@code from}); returns each batch's first offset.
     */
    private static List<Long> batches(FetchResponse.PartitionData p, long from) {
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        ByteBuf records = p.records();
        List<Long> firsts = new ArrayList<>();
        for (int pos = 0; pos < records.readableBytes(); pos += RecordBatchLayout.batchSize(records, pos)) {
            assertThat(RecordBatchLayout.attributes(records, pos) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                    .isZero();
            assertThat(RecordBatchLayout.crc(records, pos)).isEqualTo(RecordBatchLayout.computeCrc(records, pos));
        }
        long expected = from - from % BATCH_RECORDS;
        for (DecodedRecord r : RecordBatchReader.decode(records, from)) {
            assertThat(r.offset()).isEqualTo(expected);
            assertThat(new String(r.key(), UTF_8)).isEqualTo("order-" + expected);
            if (expected % BATCH_RECORDS == 0) {
                firsts.add(expected);
            }
            expected++;
        }
        return firsts;
    }

    @Test
    void smallMaxBytesGetsTheFirstDecompressedBatchAloneThenOneByOne() throws Exception {
        try (RawClient client = new RawClient(BROKERS.get(TRANSPORT).port())) {
            Requests.createTopic(client, t, 1);
            CompressionType[] codecs = new CompressionType[5];
            Arrays.fill(codecs, CompressionType.ZSTD);
            produce(client, t, 0, codecs);
            int stored = CompressedProduceTest.compress(plain(4), CompressionType.ZSTD).length;
            int maxBytes = 3000;
            assertThat(stored * 2).as("several stored batches fit maxBytes").isLessThan(maxBytes);
            assertThat(plain(0).length).as("a decompressed batch does not").isGreaterThan(maxBytes);
            // Each answer is the one batch that comes first (exempt from both limits), decompressed.
            for (int k = 0; k < codecs.length; k++) {
                FetchResponse.PartitionData p = fetchV0(client, fetch(t, new long[] {k * 100L}, maxBytes, maxBytes))
                        .get(0);
                assertThat(batches(p, k * 100L)).containsExactly(k * 100L);
                assertThat(p.records().readableBytes()).isEqualTo(plain(k).length);
            }
        }
    }

    @Test
    void maxBytesAndPartitionMaxBytesCountDecompressedBytes() throws Exception {
        try (RawClient client = new RawClient(BROKERS.get(TRANSPORT).port())) {
            Requests.createTopic(client, t, 1);
            produce(
                    client,
                    t,
                    0,
                    CompressionType.ZSTD,
                    CompressionType.LZ4,
                    CompressionType.GZIP,
                    CompressionType.SNAPPY,
                    CompressionType.ZSTD);
            int twoAndAHalf = plain(0).length * 5 / 2;
            // maxBytes: two batches fit, the third would pass it.
            FetchResponse.PartitionData p = fetchV0(client, fetch(t, new long[] {0}, twoAndAHalf, 1 << 20))
                    .get(0);
            assertThat(batches(p, 0)).containsExactly(0L, 100L);
            assertThat(p.records().readableBytes()).isLessThanOrEqualTo(twoAndAHalf);
            // partitionMaxBytes below maxBytes: the same two.
            p = fetchV0(client, fetch(t, new long[] {0}, 1 << 20, twoAndAHalf)).get(0);
            assertThat(batches(p, 0)).containsExactly(0L, 100L);
            // From inside batch 1: the rest, two by two.
            p = fetchV0(client, fetch(t, new long[] {150}, 1 << 20, twoAndAHalf))
                    .get(0);
            assertThat(batches(p, 150)).containsExactly(100L, 200L);
            p = fetchV0(client, fetch(t, new long[] {300}, 1 << 20, twoAndAHalf))
                    .get(0);
            assertThat(batches(p, 300)).containsExactly(300L, 400L);
        }
    }

    @Test
    void aLaterPartitionGetsOnlyWhatIsLeftOfMaxBytes() throws Exception {
        try (RawClient client = new RawClient(BROKERS.get(TRANSPORT).port())) {
            Requests.createTopic(client, t, 2);
            produce(client, t, 0, CompressionType.ZSTD, CompressionType.ZSTD, CompressionType.ZSTD);
            produce(client, t, 1, CompressionType.LZ4, CompressionType.LZ4, CompressionType.LZ4);
            int oneAndAHalf = plain(0).length * 3 / 2;
            List<FetchResponse.PartitionData> ps = fetchV0(client, fetch(t, new long[] {0, 0}, oneAndAHalf, 1 << 20));
            assertThat(batches(ps.get(0), 0)).containsExactly(0L);
            // Its first batch would take the response past maxBytes: none, no error, next time.
            assertThat(batches(ps.get(1), 0)).isEmpty();
            assertThat(ps.get(1).records().readableBytes()).isZero();
            // Room for two in the response, for one in a partition: each partition gets one.
            ps = fetchV0(client, fetch(t, new long[] {0, 0}, plain(2).length * 2 + 100, oneAndAHalf));
            assertThat(batches(ps.get(0), 0)).containsExactly(0L);
            assertThat(batches(ps.get(1), 0)).containsExactly(0L);
        }
    }

    @Test
    void mixedCompressedAndPlainBatchesZeroCopy() throws Exception {
        try (RawClient client = new RawClient(BROKERS.get(TRANSPORT).port())) {
            mixedCompressedAndPlainBatches(client);
        }
    }

    @Test
    void mixedCompressedAndPlainBatchesCopyMode() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), TRANSPORT);
        props.setProperty("fetch.zero.copy", "false");
        try (RawClient client = new RawClient(NODES.start(props).port())) {
            mixedCompressedAndPlainBatches(client);
        }
    }

    private void mixedCompressedAndPlainBatches(RawClient client) throws IOException {
        Requests.createTopic(client, t, 1);
        produce(
                client,
                t,
                0,
                CompressionType.ZSTD,
                CompressionType.NONE,
                CompressionType.LZ4,
                CompressionType.NONE,
                CompressionType.NONE,
                CompressionType.GZIP);
        int oneAndAHalf = plain(0).length * 3 / 2;
        int twoAndAHalf = plain(0).length * 5 / 2;
        // Stored, zstd + plain + lz4 fit 1.5 batches; decompressed, only the first.
        assertThat(batches(
                        fetchV0(client, fetch(t, new long[] {0}, oneAndAHalf, oneAndAHalf))
                                .get(0),
                        0))
                .containsExactly(0L);
        assertThat(batches(
                        fetchV0(client, fetch(t, new long[] {0}, 1 << 20, twoAndAHalf))
                                .get(0),
                        0))
                .containsExactly(0L, 100L);
        // A plain batch after a decompressed one stops at the limit too.
        assertThat(batches(
                        fetchV0(client, fetch(t, new long[] {200}, twoAndAHalf, 1 << 20))
                                .get(0),
                        200))
                .containsExactly(200L, 300L);
        // Reading on batch by batch under the limit reaches the end, every record once.
        long from = 0;
        int answers = 0;
        while (from < 600) {
            FetchResponse.PartitionData p = fetchV0(client, fetch(t, new long[] {from}, oneAndAHalf, 1 << 20))
                    .get(0);
            List<Long> firsts = batches(p, from);
            assertThat(firsts).containsExactly(from);
            assertThat(p.records().readableBytes()).isLessThanOrEqualTo(oneAndAHalf);
            from += BATCH_RECORDS;
            answers++;
        }
        assertThat(answers).isEqualTo(6);
    }

    /**
     * A zstd batch whose records (one record of zeros) decompress to just under the broker's default
     * cap, 64 MiB, which is more than a frame (64 MiB - 4) can hold: accepted on Produce, a few KB
     * stored.
     */
    private static byte[] largerThanAFrame() {
        int valueBytes = Frames.MAX_FRAME_LENGTH - 40;
        ByteBuf out = Unpooled.buffer(valueBytes + 256);
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_764_806_400_000L);
            b.append(1_764_806_400_000L, "k".getBytes(UTF_8), new byte[valueBytes]);
            b.close();
            int size = RecordBatchLayout.batchSize(out, 0);
            assertThat((long) size - RecordBatchLayout.RECORDS_OFFSET)
                    .isLessThanOrEqualTo(CompressedRecordsValidator.DEFAULT_MAX_DECOMPRESSED_BYTES);
            assertThat(size).isGreaterThan(Frames.MAX_FRAME_LENGTH);
            return CompressedProduceTest.compress(ByteBufUtil.getBytes(out), CompressionType.ZSTD);
        } finally {
            out.release();
        }
    }

    @Test
    void aBatchLargerThanAResponseIsMessageTooLargeForV0AndServedByV1() throws Exception {
        StellflowServer server = NODES.start(TestBroker.props(NODES.dir(), TRANSPORT));
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, t, 1);
            produce(client, t, 0, CompressionType.LZ4);
            byte[] huge = largerThanAFrame();
            assertThat(Requests.produceOne(client, t, 0, huge).errorCode()).isEqualTo(Errors.NONE);

            // Up to it: the batch before, not an error.
            FetchResponse.PartitionData p =
                    fetchV0(client, fetch(t, new long[] {0}, 1 << 20, 1 << 20)).get(0);
            assertThat(batches(p, 0)).containsExactly(0L);
            // At it, three times: MESSAGE_TOO_LARGE, no records, one WARN line without a trace.
            for (int i = 0; i < 3; i++) {
                p = fetchV0(client, fetch(t, new long[] {100}, 1 << 20, 1 << 20))
                        .get(0);
                assertThat(p.errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
                assertThat(p.records().readableBytes()).isZero();
            }
            List<ILoggingEvent> warns = fetchLog.at(Level.WARN);
            assertThat(warns).hasSize(1);
            assertThat(warns.get(0).getFormattedMessage())
                    .contains(
                            t + "-0",
                            "offset 100",
                            "MESSAGE_TOO_LARGE",
                            "zstd",
                            String.valueOf(Frames.MAX_FRAME_LENGTH));
            assertThat(fetchLog.withThrowable()).isEmpty();
            assertThat(fetchLog.at(Level.ERROR)).isEmpty();
            // v1 serves the stored batch as it is.
            ByteBuf stored = CompressedProduceTest.fetchV1(client, t);
            int second = RecordBatchLayout.batchSize(stored, 0);
            assertThat(RecordBatchLayout.attributes(stored, second) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                    .isEqualTo(CompressionType.ZSTD.id());
            assertThat(RecordBatchLayout.batchSize(stored, second)).isEqualTo(huge.length);
        }
    }
}
