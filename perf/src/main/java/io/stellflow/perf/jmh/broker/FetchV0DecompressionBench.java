package io.stellflow.perf.jmh.broker;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.perf.data.JsonLogLines;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What Fetch v0 (the public SDKs' path) costs the broker on compressed data (issue #21, "SDK
 * policy"): an in-process combined node (127.0.0.1, nio, {@code fetch.zero.copy} as the param) holds
 * {@value #BATCHES} batches of JSON log lines ({@link JsonLogLines} seed 42, one line per record
 * with a key, about 1,180,000 bytes and 3,681 records per batch uncompressed), stored as produced
 * with {@code codec}: {@code none} is served from the file (zero-copy, or copied in copy mode), lz4
 * and zstd are read, decompressed into the response and re-stamped (CRC-32C) by {@code
 * V0Decompression}. Each operation is one Fetch v0 request for one batch (partition maxBytes 1: the
 * first batch is always returned whole), cycling through the batches, and reads the whole response
 * on a loopback socket. So time per operation = per batch of {@link #uncompressedBatchBytes}: MB/s of
 * uncompressed data served = that / time (the setup prints it); {@code -prof gc}'s {@code gc.alloc.rate.norm} counts every
 * thread of the JVM (the broker's too): heap bytes per batch served.
 *
 * <p>The request frames are built at setup and the response is read into one reused direct buffer,
 * so the client side allocates nothing per operation. Teardown after the run ({@link
 * TeardownAfterRun}). Run: {@code perf/jmh.sh FetchV0DecompressionBench --short -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class FetchV0DecompressionBench {
    /** Uncompressed value bytes per batch: the 1 MiB of CompressedValidationBench's batch. */
    static final int VALUE_BYTES_PER_BATCH = 1 << 20;

    /** Batches in the log; each operation fetches the next one (32 x 1.18 MB = 38 MB uncompressed). */
    static final int BATCHES = 32;

    @Param({"none", "lz4", "zstd"})
    public String codec;

    @Param({"true", "false"})
    public String fetchZeroCopy;

    /** Mean bytes of a stored batch uncompressed (what a v0 reader gets per operation). */
    public long uncompressedBatchBytes;

    /** Mean bytes of a stored batch as stored. */
    public long storedBatchBytes;

    /** Bytes of the first batch uncompressed (what {@link #checkFetch} expects). */
    private int firstBatchBytes;

    private TeardownAfterRun afterRun;
    private Path dir;
    private StellflowServer server;
    private SocketChannel socket;
    private final ByteBuffer[] fetches = new ByteBuffer[BATCHES];
    private ByteBuffer response;
    private int next;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sf-fetch-v0-bench");
        Properties props = new Properties();
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        props.setProperty("log.dirs", dir.resolve("data").toString());
        props.setProperty("transport", "nio");
        props.setProperty("fetch.zero.copy", fetchZeroCopy);
        props.setProperty("message.max.bytes", Integer.toString(4 << 20));
        server = StellflowServer.start(BrokerConfig.fromProperties(props));
        Properties admin = new Properties();
        admin.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        try (StellflowAdmin topics = new StellflowAdmin(admin)) {
            topics.createTopic("bench", 1);
        }
        socket = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.port()));
        socket.setOption(StandardSocketOptions.TCP_NODELAY, true);
        response = ByteBuffer.allocateDirect(4 << 20);

        JsonLogLines lines = new JsonLogLines(42);
        long[] baseOffsets = new long[BATCHES];
        long offset = 0;
        for (int i = 0; i < BATCHES; i++) {
            ByteBuf batch = batch(lines, CompressionType.forName(codec), i == 0);
            baseOffsets[i] = offset;
            offset += RecordBatchLayout.recordCount(batch, 0);
            produce(batch);
        }
        for (int i = 0; i < BATCHES; i++) {
            fetches[i] = fetchFrame(baseOffsets[i]);
        }
        uncompressedBatchBytes /= BATCHES;
        storedBatchBytes /= BATCHES;
        checkFetch();
        System.out.printf(
                "%n[fetch-v0] codec=%s zeroCopy=%s batches=%d records=%d mean bytes per batch: uncompressed=%d stored=%d%n",
                codec, fetchZeroCopy, BATCHES, offset, uncompressedBatchBytes, storedBatchBytes);

        SocketChannel client = socket;
        StellflowServer node = server;
        Path logDir = dir;
        afterRun = TeardownAfterRun.start("fetch-v0-bench-teardown", () -> {
            client.close();
            node.close();
            deleteRecursively(logDir);
        });
    }

    /** The next batch of 1 MiB of log lines, compressed with {@code type} (none: as built). */
    private ByteBuf batch(JsonLogLines lines, CompressionType type, boolean first) {
        ByteBuf plain = Unpooled.buffer(VALUE_BYTES_PER_BATCH + VALUE_BYTES_PER_BATCH / 4);
        long ts = System.currentTimeMillis();
        RecordBatchBuilder b = new RecordBatchBuilder(plain, ts);
        int bytes = 0;
        int records = 0;
        while (bytes < VALUE_BYTES_PER_BATCH) {
            byte[] value = lines.nextLine().getBytes(StandardCharsets.UTF_8);
            b.append(ts, ("key-" + records % 1000).getBytes(StandardCharsets.UTF_8), value, List.of());
            bytes += value.length;
            records++;
        }
        b.close();
        uncompressedBatchBytes += plain.readableBytes();
        if (first) {
            firstBatchBytes = plain.readableBytes();
        }
        if (type == CompressionType.NONE) {
            storedBatchBytes += plain.readableBytes();
            return plain;
        }
        ByteBuf out = Unpooled.buffer(plain.readableBytes());
        try (CompressionCodec c = CompressionCodecs.codec(type)) {
            BatchCompression.compress(plain, 0, c, out);
        }
        plain.release();
        storedBatchBytes += out.readableBytes();
        return out;
    }

    private void produce(ByteBuf batch) throws IOException {
        ProduceRequest produce = new ProduceRequest(
                null,
                (short) 1,
                30_000,
                List.of(new ProduceRequest.TopicData("bench", List.of(new ProduceRequest.PartitionData(0, batch)))));
        ByteBuf frame = Unpooled.buffer(batch.readableBytes() + 1024);
        int start = Frames.beginFrame(frame);
        RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 1, "bench").write(frame);
        produce.write(frame);
        Frames.endFrame(frame, start);
        ByteBuffer request = frame.nioBuffer();
        call(request);
        batch.release();
        frame.release();
        ByteBuf body = responseBody();
        short code = ProduceResponse.read(body)
                .responses()
                .get(0)
                .partitions()
                .get(0)
                .errorCode();
        if (code != Errors.NONE) {
            throw new IllegalStateException("produce failed: " + Errors.name(code));
        }
    }

    private static ByteBuffer fetchFrame(long offset) {
        FetchRequest fetch = new FetchRequest(
                -1,
                0,
                1,
                1,
                (byte) 0,
                0,
                List.of(new FetchTopic("bench", List.of(new FetchPartition(0, -1, offset, -1L, 1)))));
        ByteBuf frame = Unpooled.buffer(256);
        int start = Frames.beginFrame(frame);
        RequestHeader.of(ApiKeys.FETCH, (short) 0, 2, "bench").write(frame);
        fetch.write(frame);
        Frames.endFrame(frame, start);
        ByteBuffer out = ByteBuffer.allocateDirect(frame.readableBytes());
        frame.getBytes(frame.readerIndex(), out);
        out.flip();
        frame.release();
        return out;
    }

    /** Sends {@code request}, reads the whole response into {@link #response}; returns its payload bytes. */
    private int call(ByteBuffer request) throws IOException {
        ByteBuffer r = request.duplicate();
        while (r.hasRemaining()) {
            socket.write(r);
        }
        response.clear().limit(4);
        readFully();
        int length = response.getInt(0);
        if (length < 0 || length > response.capacity() - 4) {
            throw new IOException("unexpected response length " + length);
        }
        response.limit(4 + length);
        readFully();
        return length;
    }

    private void readFully() throws IOException {
        while (response.hasRemaining()) {
            if (socket.read(response) < 0) {
                throw new IOException("broker closed the connection");
            }
        }
    }

    private ByteBuf responseBody() {
        ByteBuf body = Unpooled.wrappedBuffer(response.duplicate().position(4).limit(response.limit()));
        ResponseHeader.read(body);
        return body;
    }

    /** One v0 fetch of the first batch: no error, one uncompressed batch of the expected size. */
    private void checkFetch() throws IOException {
        call(fetches[0]);
        FetchResponse.PartitionData p = FetchResponse.read(responseBody())
                .responses()
                .get(0)
                .partitions()
                .get(0);
        if (p.errorCode() != Errors.NONE) {
            throw new IllegalStateException("fetch failed: " + Errors.name(p.errorCode()));
        }
        ByteBuf records = p.records();
        int codecBits = RecordBatchLayout.attributes(records, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK;
        if (records.readableBytes() != firstBatchBytes || codecBits != 0) {
            throw new IllegalStateException("fetch v0 returned " + records.readableBytes() + " bytes with codec "
                    + codecBits + ", expected one plain batch of " + firstBatchBytes);
        }
    }

    /** One Fetch v0 of the next stored batch; returns the response's payload bytes. */
    @Benchmark
    public int fetchV0OneBatch() throws IOException {
        ByteBuffer request = fetches[next];
        next = (next + 1) % BATCHES;
        return call(request);
    }

    @TearDown
    public void tearDown() throws Exception {
        checkFetch();
        afterRun.runIfNotStarted();
    }

    private static void deleteRecursively(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
