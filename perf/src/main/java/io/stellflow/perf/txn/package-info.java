/**
 * The transactional cases of the perf lab ({@code perf/run-matrix.sh --vs-kafka --transactions},
 * issue #20): transactional against idempotent produce throughput and consume-transform-produce
 * latency with and without transactions. {@link io.stellflow.perf.txn.TxnBench} drives one system
 * through a {@link io.stellflow.perf.txn.TxnClient}; each system's adapter is a Java source file
 * launched with that system's client jars ({@code perf/kafka/KafkaTxnBench.java}, {@code
 * perf/txn/StellflowTxnBench.java}), so the same code times both and no module of ours depends on
 * Kafka's client. Depends on the JDK and HdrHistogram only (and {@code GroupBench}'s result line).
 */
package io.stellflow.perf.txn;
