/**
 * The group coordinator's state: the record layouts of {@code __consumer_offsets} ({@link
 * io.stellflow.broker.group.GroupRecords}), the classic (v0) group of spec §6.9-6.11, our consumer
 * group protocol (the KIP-848 model, {@link io.stellflow.broker.group.ConsumerGroup}), the
 * partition assignors, committed offsets with their change journal, and {@link
 * io.stellflow.broker.group.GroupShard}, one per {@code __consumer_offsets} partition.
 *
 * <p>Everything here is pure logic: no sockets, no threads, no system clock. Time comes in as
 * {@code nowMs} arguments from the coordinator runtime's injected clock. Thread-safety: every
 * object is confined to its shard's runtime thread.
 */
package io.stellflow.broker.group;
