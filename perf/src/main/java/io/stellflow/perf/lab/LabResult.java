package io.stellflow.perf.lab;

/**
 * One measured case of a lab run (run-matrix.sh), one JSON object per line in {@code cases.jsonl}
 * (snake_case names). MB means 2^20 bytes and GB 2^30 bytes; latencies are milliseconds, {@code
 * -1} when the tool does not measure them (Kafka's ConsumerPerformance). {@code brokerCpuSeconds} is the
 * broker process's user+system CPU time over the case, from {@code /proc/<pid>/stat}; {@code
 * clientCpuSeconds} is the load tool's (the client JVM's, all threads) user+system CPU time from its
 * start to its exit, as the shell's {@code times} reports for its reaped children; {@code -1} when not
 * measured. Per-GB figures divide by the case's bytes in GB. Immutable.
 *
 * @param system {@code stellflow} or {@code kafka}
 * @param caseName the workload name, the same for both systems so that they can be paired
 * @param run 1-based repetition number
 * @param kind {@code produce}, {@code consume}, {@code latency} or {@code end-to-end}
 * @param idempotence the producer's {@code enable.idempotence} as the lab set it on both systems
 *     ({@code true} or {@code false}), {@code -} for cases without a producer or recorded before
 *     issue #20 (null when read from such a file)
 */
public record LabResult(
        String system,
        String caseName,
        int run,
        String kind,
        String transport,
        int recordSize,
        int batchSize,
        int partitions,
        String acks,
        String idempotence,
        long records,
        long bytes,
        long elapsedMs,
        double mbPerS,
        double recordsPerS,
        double p50Ms,
        double p99Ms,
        double p999Ms,
        double brokerCpuSeconds,
        double brokerCpuSecondsPerGb,
        double clientCpuSeconds,
        double clientCpuSecondsPerGb,
        long errors) {

    static final double MIB = 1024.0 * 1024.0;
    static final double GIB = 1024.0 * MIB;

    static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
