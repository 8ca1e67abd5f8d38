package io.stellflow.perf.jmh.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.RequestHeader;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Decoding a v2 request header (the first thing the event loop does per request) from a pooled
 * direct buffer, as it arrives from the socket. {@code peekCorrelationId} is the allocation-free
 * path used to answer unreadable headers. Fixed content: Produce v0, correlation id 42, client id
 * "perf-producer-1".
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class RequestHeaderDecodeBench {
    private ByteBuf payload;

    @Setup
    public void setUp() {
        payload = PooledByteBufAllocator.DEFAULT.directBuffer(256);
        RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 42, "perf-producer-1").write(payload);
    }

    @TearDown
    public void tearDown() {
        payload.release();
    }

    @Benchmark
    public RequestHeader read() {
        payload.readerIndex(0);
        return RequestHeader.read(payload);
    }

    @Benchmark
    public int peekCorrelationId() {
        return RequestHeader.peekCorrelationId(payload);
    }
}
