package io.stellflow.server.common.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.instrumentation.runtimemetrics.java17.RuntimeMetrics;

/**
 * The JVM and process metrics of a server process, from the OpenTelemetry runtime instrumentation
 * library ({@code opentelemetry-runtime-telemetry-java17}), on the process's meter provider beside
 * its {@code stellflow.*} instruments (issue 22). Names are the OpenTelemetry semantic conventions',
 * exported by Prometheus as, among others:
 *
 * <ul>
 *   <li>heap and non-heap: {@code jvm_memory_used_bytes}, {@code jvm_memory_committed_bytes}, {@code
 *       jvm_memory_limit_bytes}, {@code jvm_memory_used_after_last_gc_bytes} (labels {@code
 *       jvm_memory_type} heap|non_heap, {@code jvm_memory_pool_name});
 *   <li>GC pauses: {@code jvm_gc_duration_seconds} histogram (labels {@code jvm_gc_name}, {@code
 *       jvm_gc_action});
 *   <li>CPU: {@code jvm_cpu_time_seconds_total}, {@code jvm_cpu_recent_utilization} (0..1 of all
 *       cores), {@code jvm_cpu_count}, {@code jvm_system_cpu_utilization}, {@code
 *       jvm_system_cpu_load_1m};
 *   <li>threads and classes: {@code jvm_thread_count} (labels {@code jvm_thread_state}, {@code
 *       jvm_thread_daemon}), {@code jvm_class_loaded_total}, {@code jvm_class_count};
 *   <li>open files: {@code jvm_file_descriptor_count} and {@code jvm_file_descriptor_limit};
 *   <li>direct and mapped buffers (Netty's pooled memory, the mapped indexes): {@code
 *       jvm_buffer_memory_used_bytes} (label {@code jvm_buffer_pool_name}).
 * </ul>
 *
 * <p>The file descriptor, system CPU and buffer pool metrics are the library's "experimental" set,
 * switched on here. Only the JMX-based collectors run: they are observable instruments read at
 * collection time (a scrape), so they cost nothing between scrapes. The library's JFR-based
 * collectors are off: a JFR event stream would run a thread and record events (allocation samples,
 * lock waits) on the hot path all the time.
 *
 * <p>The series carry no {@code node.id}: Prometheus's {@code instance} label (and {@code
 * target_info}'s {@code service_instance_id}) tells the process.
 *
 * <p>Thread-safety: created and closed by the owning {@link MetricsPipeline}; {@link #close} is
 * idempotent.
 */
final class JvmMetrics implements AutoCloseable {
    private final RuntimeMetrics runtime;

    private JvmMetrics(RuntimeMetrics runtime) {
        this.runtime = runtime;
    }

    /** Registers the runtime metrics on {@code meters}. */
    // RuntimeMetrics of the java17 artifact is deprecated in 2.26 for the new
    // opentelemetry-runtime-telemetry module, whose switch for the experimental set (open file
    // descriptors) is only in its internal package; the java17 builder keeps it public.
    @SuppressWarnings("deprecation")
    static JvmMetrics start(MeterProvider meters) {
        RuntimeMetrics runtime = RuntimeMetrics.builder(new MetricsOnly(meters))
                .emitExperimentalTelemetry()
                // After the experimental switch, which also turns on the experimental JFR features:
                // the JFR buffer statistics would register jvm.buffer.* a second time (a scrape fails
                // with duplicate series, RuntimeMetricsScrapeTest), and no JFR stream runs at all.
                .disableAllFeatures()
                .build();
        return new JvmMetrics(runtime);
    }

    /** Unregisters the callbacks. Idempotent. */
    @Override
    @SuppressWarnings("deprecation")
    public void close() {
        runtime.close();
    }

    /** An {@link OpenTelemetry} that only meters: what the library asks for. */
    private record MetricsOnly(MeterProvider meters) implements OpenTelemetry {
        @Override
        public MeterProvider getMeterProvider() {
            return meters;
        }

        @Override
        public TracerProvider getTracerProvider() {
            return TracerProvider.noop();
        }

        @Override
        public ContextPropagators getPropagators() {
            return ContextPropagators.noop();
        }
    }
}
