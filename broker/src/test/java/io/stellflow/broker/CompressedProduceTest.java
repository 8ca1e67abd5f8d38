package io.stellflow.broker;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.append.CompressionRefusals;
import io.stellflow.broker.telemetry.CompressionTelemetry;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.Header;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Produce of compressed batches (decision 9.o) against a real broker: each codec is accepted, stored
 * as produced and fetched back byte for byte with Fetch v1; a decompression bomb over {@code
 * compression.max.decompressed.bytes}, a malformed and a truncated container are refused with their
 * code, one WARN line, and the log unchanged; with and without append agents.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class CompressedProduceTest {
    private static final long TS = 1_764_806_400_000L;
    private static final long CAP = 1 << 20;

    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @RegisterExtension
    final LogLines refusals = LogLines.of(CompressionRefusals.class);

    private StellflowServer server;
    private String t;

    @BeforeEach
    void name(TestInfo test) {
        t = test.getTestMethod().orElseThrow().getName();
    }

    private RawClient connect(StellflowServer s) throws IOException {
        server = s;
        RawClient client = new RawClient(s.port());
        Requests.createTopic(client, t, 1);
        return client;
    }

    /** {@code count} JSON-like log records with keys and a header: realistic, compressible. */
    static byte[] plainBatch(int count, int firstId) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
        for (int i = 0; i < count; i++) {
            int id = firstId + i;
            String value = "{\"ts\":" + (TS + i) + ",\"level\":\"INFO\",\"service\":\"checkout\",\"user\":" + (id % 97)
                    + ",\"msg\":\"order " + id + " paid\",\"latency_ms\":" + (id * 7 % 300) + "}";
            b.append(TS + i, ("order-" + id).getBytes(UTF_8), value.getBytes(UTF_8), List.of(new Header("v", null)));
        }
        b.close();
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    static byte[] compress(byte[] plain, CompressionType type) {
        ByteBuf out = Unpooled.buffer();
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            BatchCompression.compress(Unpooled.wrappedBuffer(plain), 0, codec, out);
        }
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    /** A one-record batch whose value is {@code valueBytes} zeros: a few KB compressed, a bomb. */
    static byte[] bomb(CompressionType type, int valueBytes) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
        b.append(TS, "k".getBytes(UTF_8), new byte[valueBytes]);
        b.close();
        byte[] plain = ByteBufUtil.getBytes(out);
        out.release();
        return compress(plain, type);
    }

    /** The stored batches from offset 0 by Fetch v1 (stored bytes untouched). */
    static ByteBuf fetchV1(RawClient client, String topic) throws IOException {
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                8 << 20,
                (byte) 0,
                0,
                List.of(new FetchTopic(topic, List.of(new FetchPartition(0, -1, 0, -1L, 8 << 20)))));
        client.send(RequestHeader.of(ApiKeys.FETCH, (short) 1, 7, "test"), request);
        byte[] frame = client.receiveRawFrame();
        ByteBuf buf = Unpooled.wrappedBuffer(frame, 4, frame.length - 4);
        assertThat(buf.readInt()).isEqualTo(7);
        buf.skipBytes(8); // headerVersion, errorCode, throttleTimeMs
        FetchResponseV1.PartitionData p =
                FetchResponseV1.read(buf).responses().get(0).partitions().get(0);
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        return p.records();
    }

    /** Bytes of a batch from its magic on: what the broker never changes (it stamps offset and epoch before). */
    private static byte[] fromMagic(byte[] batch) {
        return Arrays.copyOfRange(batch, RecordBatchLayout.MAGIC_OFFSET, batch.length);
    }

    @Test
    void eachCodecIsStoredAsProducedAndFetchedBackByteForByte() throws Exception {
        try (RawClient client = connect(BROKERS.get(transport))) {
            byte[][] sent = new byte[4][];
            long offset = 0;
            int i = 0;
            for (CompressionType type :
                    List.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD)) {
                byte[] plain = plainBatch(200, i * 1000);
                sent[i] = compress(plain, type);
                assertThat(sent[i].length).as(type.name()).isLessThan(plain.length / 2);
                PartitionResponse r = Requests.produceOne(client, t, 0, sent[i]);
                assertThat(r.errorCode()).as(type.name()).isEqualTo(Errors.NONE);
                assertThat(r.baseOffset()).isEqualTo(offset);
                offset += 200;
                i++;
            }
            assertThat(TestBroker.partition(server, t, 0).logEndOffset()).isEqualTo(800);
            ByteBuf stored = fetchV1(client, t);
            int pos = 0;
            for (byte[] batch : sent) {
                int size = RecordBatchLayout.batchSize(stored, pos);
                assertThat(size).isEqualTo(batch.length);
                assertThat(ByteBufUtil.getBytes(
                                stored, pos + RecordBatchLayout.MAGIC_OFFSET, size - RecordBatchLayout.MAGIC_OFFSET))
                        .isEqualTo(fromMagic(batch));
                pos += size;
            }
            assertThat(pos).isEqualTo(stored.readableBytes());
        }
    }

    @Test
    void bombsAndBadContainersAreRefusedAndTheLogKeepsOnlyGoodBatches() throws Exception {
        refusedAndLogIntact(ownNode(new Properties()));
    }

    @Test
    void withoutAppendAgentsTheRequestThreadsRefuseTheSame() throws Exception {
        Properties extra = new Properties();
        extra.setProperty("num.append.agents", "0");
        refusedAndLogIntact(ownNode(extra));
    }

    private RawClient ownNode(Properties extra) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("compression.max.decompressed.bytes", Long.toString(CAP));
        props.putAll(extra);
        return connect(NODES.start(props));
    }

    private void refusedAndLogIntact(RawClient c) throws Exception {
        try (RawClient client = c) {
            byte[] good = compress(plainBatch(10, 0), CompressionType.LZ4);
            assertThat(Requests.produceOne(client, t, 0, good).errorCode()).isEqualTo(Errors.NONE);

            byte[] bomb = bomb(CompressionType.ZSTD, (int) CAP * 4);
            assertThat(bomb.length).isLessThan(4096);
            assertThat(Requests.produceOne(client, t, 0, bomb).errorCode()).isEqualTo(Errors.INVALID_RECORD);

            byte[] malformed = good.clone();
            malformed[RecordBatchLayout.RECORDS_OFFSET] ^= 0x5a; // the LZ4 magic
            restampCrc(malformed);
            assertThat(Requests.produceOne(client, t, 0, malformed).errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE);

            byte[] truncated = Arrays.copyOf(good, good.length - 10);
            restampLengthAndCrc(truncated);
            assertThat(Requests.produceOne(client, t, 0, truncated).errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE);

            // A bomb within a frame of several batches refuses the whole partition's records.
            byte[] mixed = Requests.concat(compress(plainBatch(3, 50), CompressionType.GZIP), bomb);
            assertThat(Requests.produceOne(client, t, 0, mixed).errorCode()).isEqualTo(Errors.INVALID_RECORD);

            PartitionResponse after =
                    Requests.produceOne(client, t, 0, compress(plainBatch(5, 100), CompressionType.SNAPPY));
            assertThat(after.errorCode()).isEqualTo(Errors.NONE);
            assertThat(after.baseOffset()).isEqualTo(10);
            assertThat(TestBroker.partition(server, t, 0).logEndOffset()).isEqualTo(15);
            ByteBuf stored = fetchV1(client, t);
            assertThat(RecordBatchLayout.batchSize(stored, 0)).isEqualTo(good.length);
            int second = good.length;
            assertThat(RecordBatchLayout.recordCount(stored, second)).isEqualTo(5);
            assertThat(second + RecordBatchLayout.batchSize(stored, second)).isEqualTo(stored.readableBytes());

            // One WARN line (rate-limited) naming the partition, codec and cap; the rest at DEBUG.
            List<ILoggingEvent> warns = refusals.at(Level.WARN);
            assertThat(warns).hasSize(1);
            String line = warns.get(0).getFormattedMessage();
            assertThat(line)
                    .contains(t + "-0", "INVALID_RECORD", "zstd", "over the decompression cap", Long.toString(CAP));
        }
    }

    /**
     * Fetch v0 is the public SDKs' path and they cannot decompress: a compressed stored batch goes
     * out decompressed (codec bits 0, a valid CRC), so a spec-only v0 decoder reads every record
     * with its offset ({@code fetchOffset + baseOffsetDelta + offsetDelta}), from any offset, in
     * zero-copy and copy mode; v1 still returns the stored compressed bytes.
     */
    @Test
    void fetchV0ServesCompressedBatchesUncompressed() throws Exception {
        try (RawClient client = connect(BROKERS.get(transport))) {
            fetchV0Decodes(client);
        }
    }

    @Test
    void fetchV0DecompressesInCopyModeToo() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("fetch.zero.copy", "false");
        try (RawClient client = connect(NODES.start(props))) {
            fetchV0Decodes(client);
        }
    }

    private void fetchV0Decodes(RawClient client) throws Exception {
        byte[] lz4 = compress(plainBatch(100, 0), CompressionType.LZ4);
        byte[] plain = plainBatch(50, 100);
        byte[] zstd = compress(plainBatch(100, 150), CompressionType.ZSTD);
        for (byte[] b : List.of(lz4, plain, zstd)) {
            assertThat(Requests.produceOne(client, t, 0, b).errorCode()).isEqualTo(Errors.NONE);
        }
        for (long from : new long[] {0, 99, 120, 249}) {
            FetchResponse.PartitionData p = Requests.fetchOne(client, Requests.fetch(t, 0, from, 0, 8 << 20, -1));
            assertThat(p.errorCode()).isEqualTo(Errors.NONE);
            ByteBuf records = p.records();
            for (int pos = 0; pos < records.readableBytes(); pos += RecordBatchLayout.batchSize(records, pos)) {
                assertThat(RecordBatchLayout.attributes(records, pos) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                        .as("codec of the batch at %d", pos)
                        .isZero();
                assertThat(RecordBatchLayout.crc(records, pos)).isEqualTo(RecordBatchLayout.computeCrc(records, pos));
            }
            List<DecodedRecord> decoded = RecordBatchReader.decode(records, from);
            long expected = from - (from < 100 ? from : from < 150 ? from - 100 : from - 150);
            for (DecodedRecord r : decoded) {
                assertThat(r.offset()).isEqualTo(expected);
                assertThat(new String(r.key(), UTF_8)).isEqualTo("order-" + expected);
                expected++;
            }
            assertThat(expected).as("records from %d", from).isEqualTo(250);
        }
        assertThat(server.telemetry()
                        .metrics()
                        .compression()
                        .batches(CompressionTelemetry.FETCH_V0, CompressionType.ZSTD))
                .isPositive();
        ByteBuf stored = fetchV1(client, t);
        assertThat(RecordBatchLayout.attributes(stored, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                .isEqualTo(CompressionType.LZ4.id());
    }

    private static void restampCrc(byte[] batch) {
        ByteBuf b = Unpooled.wrappedBuffer(batch);
        b.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(b, 0));
    }

    private static void restampLengthAndCrc(byte[] batch) {
        ByteBuf b = Unpooled.wrappedBuffer(batch);
        b.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, batch.length - RecordBatchLayout.LOG_OVERHEAD);
        restampCrc(batch);
    }
}
