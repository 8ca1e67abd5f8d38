package io.stellflow.client;

import io.stellflow.protocol.record.Header;
import java.util.List;

/**
 * One record returned by {@link StellflowConsumer#poll}. Immutable by convention (the arrays are
 * owned by the caller once returned).
 *
 * @param topic the topic
 * @param partition the partition
 * @param offset the record's absolute offset
 * @param timestampMs CreateTime in epoch milliseconds (baseTimestamp + timestampDelta)
 * @param key key bytes or null
 * @param value value bytes or null
 * @param headers record headers, never null (empty when none)
 */
public record ConsumerRecord(
        String topic, int partition, long offset, long timestampMs, byte[] key, byte[] value, List<Header> headers) {}
