package io.stellflow.client;

/**
 * Where an acknowledged record was written. Immutable.
 *
 * @param topic the topic
 * @param partition the partition
 * @param offset the record's offset in the partition (baseOffset of the request's partition data
 *     plus the record's index in it, {@code docs/spec/wire-protocol.md} §6.3)
 * @param timestampMs the record's CreateTime in epoch milliseconds
 */
public record RecordMetadata(String topic, int partition, long offset, long timestampMs) {}
