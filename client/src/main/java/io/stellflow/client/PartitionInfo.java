package io.stellflow.client;

import java.util.List;

/**
 * One partition as the cluster's Metadata describes it. Immutable.
 *
 * @param topic the topic
 * @param partition the partition number
 * @param errorCode partition-level error (0 = none, 8 = no leader)
 * @param leaderId the leader's broker id, -1 when there is none
 * @param leaderEpoch the current leader epoch
 * @param replicas all assigned replica broker ids
 * @param isr the in-sync replica broker ids
 */
public record PartitionInfo(
        String topic,
        int partition,
        short errorCode,
        int leaderId,
        int leaderEpoch,
        List<Integer> replicas,
        List<Integer> isr) {}
