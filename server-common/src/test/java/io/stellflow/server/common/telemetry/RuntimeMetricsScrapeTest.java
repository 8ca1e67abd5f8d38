package io.stellflow.server.common.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The JVM and process metrics ({@link JvmMetrics}, the OpenTelemetry runtime library 2.26 on SDK
 * 1.68) scraped over HTTP from a real {@link MetricsPipeline} endpoint: heap, GC pauses, CPU,
 * threads, classes and open file descriptors have series with plausible values.
 */
@IntegrationTest
class RuntimeMetricsScrapeTest {

    private static Properties props(String exporter) {
        Properties p = new Properties();
        p.setProperty("metrics.exporter", exporter);
        p.setProperty("metrics.port", "0");
        return p;
    }

    @Test
    void thePrometheusEndpointServesHeapGcCpuThreadsClassesAndFileDescriptors() throws Exception {
        try (MetricsPipeline pipeline =
                MetricsPipeline.start(TelemetryConfig.from(props("prometheus")), "stellflow-test", 3)) {
            int port = pipeline.port();
            List<PrometheusScrape.Sample> samples = PrometheusScrape.scrape(port);

            double heapUsed = samples.stream()
                    .filter(s -> s.name().equals("jvm_memory_used_bytes"))
                    .filter(s -> "heap".equals(s.labels().get("jvm_memory_type")))
                    .mapToDouble(PrometheusScrape.Sample::value)
                    .sum();
            assertThat(heapUsed).as("heap used").isPositive();
            assertThat(sum(samples, "jvm_thread_count")).as("live threads").isGreaterThanOrEqualTo(2);
            assertThat(sum(samples, "jvm_class_loaded_total"))
                    .as("classes loaded")
                    .isGreaterThan(1000);
            assertThat(sum(samples, "jvm_cpu_time_seconds_total"))
                    .as("process CPU")
                    .isPositive();
            assertThat(sum(samples, "jvm_cpu_count"))
                    .isEqualTo(Runtime.getRuntime().availableProcessors());
            double fds = sum(samples, "jvm_file_descriptor_count");
            double fdLimit = sum(samples, "jvm_file_descriptor_limit");
            assertThat(fds).as("open fds (the endpoint's socket at least)").isGreaterThanOrEqualTo(3);
            assertThat(fdLimit).as("fd limit").isGreaterThanOrEqualTo(fds);

            // A GC pause is a histogram sample recorded from the JVM's GC notification.
            Wait.untilPasses(
                    Duration.ofSeconds(20),
                    () -> {
                        System.gc();
                        assertThat(sum(PrometheusScrape.scrapeOrEmpty(port), "jvm_gc_duration_seconds_count"))
                                .isPositive();
                    },
                    "a GC pause in jvm_gc_duration_seconds");
        }
    }

    private static double sum(List<PrometheusScrape.Sample> samples, String name) {
        return samples.stream()
                .filter(s -> s.name().equals(name))
                .mapToDouble(PrometheusScrape.Sample::value)
                .sum();
    }
}
