package io.stellflow.perf.jmh.broker;

import io.stellflow.broker.telemetry.BrokerTelemetry;
import io.stellflow.broker.telemetry.RequestTelemetry;
import io.stellflow.broker.telemetry.StorageMetrics;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.server.common.telemetry.TelemetryConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the broker's telemetry costs per request, with {@code metrics.exporter=none} (the no-op
 * meter) and {@code prometheus} (the OpenTelemetry SDK behind a scrape endpoint on an ephemeral
 * port), through the same calls the pipeline makes:
 *
 * <ul>
 *   <li>{@link #produceRequest}: one answered Produce ({@link RequestTelemetry#completed}: request
 *       and produce counters, request and produce latency histograms) plus the append agent's
 *       {@link StorageMetrics#append} (append latency histogram) and {@code produced} (bytes,
 *       records). Latencies vary from a fixed-seed {@link SplittableRandom}(42) over 0.05-50 ms so
 *       the bucket search is not always the same branch.
 *   <li>{@link #produceRequestTwoThreads}: the same from two threads (a request thread and an
 *       append agent record into the same histograms).
 *   <li>{@link #fetchRequest}: one answered Fetch (counters, fetch and request latency).
 *   <li>{@link #scrape}: one Prometheus scrape ({@code GET /metrics}, every series of a broker with
 *       no partitions) over loopback, for the prometheus case only (the none case answers 0 without
 *       work). A Prometheus scraping every 5 s pays this 0.2 times per second.
 * </ul>
 *
 * <p>{@code -prof gc}'s {@code gc.alloc.rate.norm} is the bytes allocated per request; the hot-path
 * goal is 0. Time per operation in ns. Closing the telemetry and the HTTP client waits until the JMH
 * run in this JVM is over ({@link TeardownAfterRun}). Run as a trial teardown, inside the last
 * measured iteration, the prometheus shutdown showed as 0.04-0.06 B/op against 0.002 in the
 * iteration before; after the run: 0.001-0.002 in both (2026-12-04, {@code --short}, a busy
 * machine).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class RequestTelemetryBench {
    /** 1,024 latencies in ns, log-spread over 0.05-50 ms. */
    private static final int LATENCIES = 1024;

    @Param({"none", "prometheus"})
    public String exporter;

    private TeardownAfterRun afterRun;
    private BrokerTelemetry telemetry;
    private RequestTelemetry requests;
    private StorageMetrics storage;
    private final long[] latencyNanos = new long[LATENCIES];
    private HttpClient http;
    private HttpRequest scrapeRequest;

    /** Each thread walks the latencies from its own index. */
    @State(Scope.Thread)
    public static class Cursor {
        int next;

        long take(long[] values) {
            long v = values[next];
            next = (next + 1) & (LATENCIES - 1);
            return v;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        Properties props = new Properties();
        props.setProperty("metrics.exporter", exporter);
        props.setProperty("metrics.port", "0");
        telemetry = BrokerTelemetry.create(TelemetryConfig.from(props), 0);
        requests = telemetry.requests();
        storage = telemetry.metrics().storage();
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < LATENCIES; i++) {
            latencyNanos[i] = (long) (50_000 * Math.pow(1000, random.nextDouble()));
        }
        if (telemetry.metricsPort() > 0) {
            http = HttpClient.newHttpClient();
            scrapeRequest = HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + telemetry.metricsPort() + "/metrics"))
                    .build();
        }
        BrokerTelemetry closing = telemetry;
        HttpClient client = http;
        afterRun = TeardownAfterRun.start("telemetry-bench-teardown", () -> {
            closing.close();
            if (client != null) {
                client.close();
            }
        });
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        afterRun.runIfNotStarted();
    }

    private void produce(Cursor cursor) {
        long latency = cursor.take(latencyNanos);
        storage.append(latency >>> 2, true);
        telemetry.metrics().produced(1 << 20, 1020);
        requests.completed(
                ApiKeys.PRODUCE, Errors.NONE, false, System.nanoTime() - latency, null, 1, 1 << 20, 0, 0, false);
    }

    @Benchmark
    public void produceRequest(Cursor cursor) {
        produce(cursor);
    }

    @Benchmark
    @Threads(2)
    public void produceRequestTwoThreads(Cursor cursor) {
        produce(cursor);
    }

    @Benchmark
    public void fetchRequest(Cursor cursor) {
        long latency = cursor.take(latencyNanos);
        requests.completed(
                ApiKeys.FETCH, Errors.NONE, false, System.nanoTime() - latency, null, 1, 1 << 20, 1020, 0, false);
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long scrape() throws IOException, InterruptedException {
        if (http == null) {
            return 0;
        }
        HttpResponse<InputStream> response = http.send(scrapeRequest, HttpResponse.BodyHandlers.ofInputStream());
        long bytes = 0;
        try (InputStream in = response.body()) {
            byte[] chunk = new byte[8192];
            int n;
            while ((n = in.read(chunk)) > 0) {
                bytes += n;
            }
        }
        return bytes;
    }
}
