/**
 * The consumer-group cases of the perf lab ({@code perf/run-matrix.sh --groups}): rebalance time,
 * commit throughput per coordinator, group against {@code assign} consume. {@link
 * io.stellflow.perf.groups.GroupBench} drives one system through a {@link
 * io.stellflow.perf.groups.GroupClient}; each system's adapter is a Java source file launched with
 * that system's client jars ({@code perf/kafka/KafkaGroupBench.java}, {@code
 * perf/groups/StellflowGroupBench.java}), so that the same code times both and no module of ours
 * depends on Kafka's client. Depends on the JDK and HdrHistogram only (Kafka's lib directory carries
 * HdrHistogram too).
 */
package io.stellflow.perf.groups;
