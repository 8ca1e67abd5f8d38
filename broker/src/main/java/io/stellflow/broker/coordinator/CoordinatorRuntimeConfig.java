package io.stellflow.broker.coordinator;

/**
 * Settings of one {@link CoordinatorRuntime}.
 *
 * @param threads runtime threads ({@code group.coordinator.threads}), 1..64; each shard is pinned to
 *     thread {@code partition % threads}
 * @param commitTimeoutMs how long a write waits for the high watermark before its command fails with
 *     {@code COORDINATOR_NOT_AVAILABLE} ({@code offsets.commit.timeout.ms}), &gt;= 1; its records
 *     stay in the log and may still commit
 * @param loadBufferBytes bytes of log read per load step ({@code offsets.load.buffer.size}), &gt;= 1;
 *     between two steps the thread serves its other shards
 */
public record CoordinatorRuntimeConfig(int threads, long commitTimeoutMs, int loadBufferBytes) {
    public CoordinatorRuntimeConfig {
        if (threads < 1 || threads > 64) {
            throw new IllegalArgumentException("threads must be 1..64: " + threads);
        }
        if (commitTimeoutMs < 1) {
            throw new IllegalArgumentException("commitTimeoutMs must be >= 1: " + commitTimeoutMs);
        }
        if (loadBufferBytes < 1) {
            throw new IllegalArgumentException("loadBufferBytes must be >= 1: " + loadBufferBytes);
        }
    }
}
