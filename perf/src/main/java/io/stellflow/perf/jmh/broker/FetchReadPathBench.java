package io.stellflow.perf.jmh.broker;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
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
 * The fetch read path: sending 1 MiB of a page-cached log file to a loopback TCP socket either
 * FileRegion-style ({@link FileChannel#transferTo}, sendfile: the bytes never enter user space) or
 * by copying them into a direct buffer first ({@code read} + {@code write}, what a non-zero-copy
 * fetch does). A drain thread reads the socket on the other side and throws the bytes away. The
 * file is 64 MiB of SplittableRandom(42) bytes, read once in setup so it is in the page cache;
 * each operation sends the next 1 MiB chunk. Time per MiB.
 *
 * <p>Teardown (closing the sockets and the file, deleting the directory) waits until the JMH run in
 * this JVM is over ({@link TeardownAfterRun}). Run as a trial teardown, inside the last measured
 * iteration, {@code -prof gc} counted it: 5 B/op in the first iteration, 132-151 in the last; after
 * the run: 3-4 B/op in both (2026-12-04, {@code --short}, a busy machine).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FetchReadPathBench {
    static final int FILE_BYTES = 64 << 20;
    static final int CHUNK_BYTES = 1 << 20;

    @Param({"1048576"})
    public int chunkBytes;

    private TeardownAfterRun afterRun;
    private Path dir;
    private FileChannel file;
    private ServerSocketChannel server;
    private SocketChannel out;
    private Thread drain;
    private ByteBuffer copy;
    private long position;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("sf-fetch-bench");
        Path log = dir.resolve("00000000000000000000.log");
        byte[] chunk = new byte[CHUNK_BYTES];
        SplittableRandom random = new SplittableRandom(42);
        try (FileChannel w = FileChannel.open(log, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (int i = 0; i < FILE_BYTES / CHUNK_BYTES; i++) {
                random.nextBytes(chunk);
                w.write(ByteBuffer.wrap(chunk));
            }
        }
        file = FileChannel.open(log, StandardOpenOption.READ);
        ByteBuffer warm = ByteBuffer.allocateDirect(CHUNK_BYTES);
        for (long p = 0; p < FILE_BYTES; p += CHUNK_BYTES) {
            warm.clear();
            file.read(warm, p);
        }
        server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        out = SocketChannel.open(server.getLocalAddress());
        SocketChannel in = server.accept();
        drain = Thread.ofPlatform().daemon().name("fetch-bench-drain").start(() -> {
            ByteBuffer sink = ByteBuffer.allocateDirect(256 * 1024);
            try (in) {
                while (in.read(sink) >= 0) {
                    sink.clear();
                }
            } catch (IOException e) {
                // the benchmark closed the socket
            }
        });
        copy = ByteBuffer.allocateDirect(chunkBytes);
        SocketChannel client = out;
        Thread drainThread = drain;
        ServerSocketChannel listener = server;
        FileChannel logFile = file;
        Path logDir = dir;
        afterRun = TeardownAfterRun.start("fetch-bench-teardown", () -> {
            client.close();
            drainThread.join(5000);
            listener.close();
            logFile.close();
            try (var files = Files.list(logDir)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(logDir);
        });
    }

    @TearDown
    public void tearDown() throws Exception {
        afterRun.runIfNotStarted();
    }

    private long nextChunk() {
        long p = position;
        position = (position + chunkBytes) % FILE_BYTES;
        return p;
    }

    @Benchmark
    public long transferTo() throws IOException {
        long p = nextChunk();
        long sent = 0;
        while (sent < chunkBytes) {
            sent += file.transferTo(p + sent, chunkBytes - sent, out);
        }
        return sent;
    }

    @Benchmark
    public long copyToDirectBuffer() throws IOException {
        long p = nextChunk();
        copy.clear();
        while (copy.hasRemaining()) {
            if (file.read(copy, p + copy.position()) < 0) {
                throw new IOException("short log file at " + (p + copy.position()));
            }
        }
        copy.flip();
        long sent = 0;
        while (copy.hasRemaining()) {
            sent += out.write(copy);
        }
        return sent;
    }
}
