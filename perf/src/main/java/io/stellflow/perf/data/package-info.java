/**
 * Realistic data sets made from a fixed seed, for benchmarks and the perf lab (compression ratio and
 * MB/s need data that compresses as production data does: not random bytes, not zeros).
 */
package io.stellflow.perf.data;
