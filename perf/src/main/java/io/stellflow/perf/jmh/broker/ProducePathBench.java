package io.stellflow.perf.jmh.broker;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
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
 * The produce path in-process: a broker ({@link StellflowServer}, 127.0.0.1, the given transport,
 * one append agent, a fresh log dir; a combined node, as users run it: its embedded one-voter
 * controller and the broker's heartbeats to it run beside the benchmark and allocate a little in the
 * background) receives one Produce request of ONE batch of up to 1 MiB (1 KiB
 * records from SplittableRandom(42), as many as fit, acks=1) per operation over a loopback socket and
 * answers after the append: frame decode (the frame spans many socket reads: {@code
 * FrameAssembly}), header and body decode, hand-off to the partition's MPSC queue, the agent's
 * validation (CRC-32C), offset assignment in place, the write to the segment and the response. The
 * benchmark thread is a minimal blocking client (a pre-built frame, a reused response buffer), so
 * {@code -prof gc}'s {@code gc.alloc.rate.norm} is, within a few bytes, what the broker allocates
 * per 1 MiB request; divide by the records per batch (about 1,020) for bytes per record. Time per request.
 *
 * <p>Teardown: the last response is checked in the trial teardown (an error fails the run); closing
 * the socket, stopping the node (about 3.6 MB allocated) and deleting the log dir are scheduled at
 * setup to run once the JMH run in this JVM is over ({@link TeardownAfterRun}, which says why that
 * and not the teardown): JMH runs a trial teardown inside the last measured iteration, and {@code
 * -prof gc} charged the shutdown to it (2026-12-03: iterations 1-4 about 2,900 B/op, the fifth about
 * 8,500). After the run instead (2026-12-04, a busy machine): 2,928-3,282 B/op over the five with
 * metrics none, 3,082-3,484 with prometheus, the fifth no higher than the others.
 *
 * <p>Disk: every operation appends 1 MiB to the log (a few GB per run); the log dir is deleted after
 * the run.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ProducePathBench {
    static final int BATCH_BYTES = 1 << 20;

    @Param({"1024"})
    public int recordBytes;

    @Param({"nio"})
    public String transport;

    /**
     * {@code metrics.exporter}: {@code none} (the no-op meter) or {@code prometheus} (the
     * OpenTelemetry SDK behind a scrape endpoint on an ephemeral port, not scraped here): the
     * difference is what the default instruments cost per 1 MiB request.
     */
    @Param({"none", "prometheus"})
    public String metricsExporter;

    private TeardownAfterRun afterRun;
    private Path dir;
    private StellflowServer server;
    private SocketChannel socket;
    private ByteBuffer request;
    private ByteBuffer response;
    private int responseBytes;

    /** Records in the 1 MiB batch (1,020 of 1 KiB): divide bytes/op by this for bytes per record. */
    public int recordsPerBatch;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sf-produce-bench");
        Properties props = new Properties();
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        // A combined node (the default roles); its metadata log goes to the sibling data-metadata.
        props.setProperty("log.dirs", dir.resolve("data").toString());
        props.setProperty("transport", transport);
        props.setProperty("num.append.agents", "1");
        props.setProperty("metrics.exporter", metricsExporter);
        props.setProperty("metrics.port", "0");
        server = StellflowServer.start(BrokerConfig.fromProperties(props));
        Properties admin = new Properties();
        admin.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        try (StellflowAdmin topics = new StellflowAdmin(admin)) {
            topics.createTopic("bench", 1);
        }
        request = buildRequest();
        response = ByteBuffer.allocateDirect(64 * 1024);
        socket = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.port()));
        socket.setOption(StandardSocketOptions.TCP_NODELAY, true);
        responseBytes = call();
        checkResponse();
        SocketChannel client = socket;
        StellflowServer node = server;
        Path logDir = dir;
        afterRun = TeardownAfterRun.start("produce-bench-teardown", () -> {
            client.close();
            node.close();
            deleteRecursively(logDir);
        });
    }

    private ByteBuffer buildRequest() {
        ByteBuf batch = Unpooled.buffer(BATCH_BYTES + 64 * 1024);
        RecordBatchBuilder builder = new RecordBatchBuilder(batch, System.currentTimeMillis());
        SplittableRandom random = new SplittableRandom(42);
        byte[] value = new byte[recordBytes];
        // Fill up to 1 MiB like the producer's batch.size (message.max.bytes is 1 MiB + 12).
        int recordSize = RecordBatchBuilder.recordSizeInBytes(0, recordBytes, List.of());
        recordsPerBatch = 0;
        while (builder.sizeInBytes() + recordSize <= BATCH_BYTES) {
            random.nextBytes(value);
            builder.append(System.currentTimeMillis(), null, value);
            recordsPerBatch++;
        }
        builder.close();
        ProduceRequest produce = new ProduceRequest(
                null,
                (short) 1,
                30_000,
                List.of(new ProduceRequest.TopicData("bench", List.of(new ProduceRequest.PartitionData(0, batch)))));
        ByteBuf frame = Unpooled.buffer(BATCH_BYTES + 64 * 1024);
        int start = Frames.beginFrame(frame);
        RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 1, "bench").write(frame);
        produce.write(frame);
        Frames.endFrame(frame, start);
        ByteBuffer out = ByteBuffer.allocateDirect(frame.readableBytes());
        frame.getBytes(frame.readerIndex(), out);
        out.flip();
        batch.release();
        frame.release();
        return out;
    }

    /** Sends the request, reads the whole response into {@link #response}; returns its payload bytes. */
    private int call() throws IOException {
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

    private void checkResponse() {
        ByteBuf body = Unpooled.wrappedBuffer(response.duplicate().position(4).limit(4 + responseBytes));
        ResponseHeader.read(body);
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

    @Benchmark
    public int produce1MiB() throws IOException {
        int length = call();
        if (length != responseBytes) {
            checkResponse(); // an error response has another size: fail loudly with its code
        }
        return length;
    }

    @TearDown
    public void tearDown() throws Exception {
        checkResponse();
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
