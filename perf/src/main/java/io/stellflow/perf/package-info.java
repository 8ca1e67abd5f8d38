/**
 * The perf lab: the load generator ({@code stellflow-perf produce|consume|end-to-end|report}, {@link
 * io.stellflow.perf.PerfCommand}), the lab's reports ({@code io.stellflow.perf.lab}) and the JMH
 * benchmarks ({@code io.stellflow.perf.jmh}, packages mirroring the code they measure). Only {@code
 * io.stellflow.perf.jmh.broker} uses the broker; the load generator is a client.
 */
package io.stellflow.perf;
