package io.stellflow.broker.coordinator;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * Which partition of {@code __consumer_offsets} holds a group: the CRC-32C (Castagnoli, the checksum
 * of record batches, {@code docs/spec/wire-protocol.md} §7) of the group id's UTF-8 bytes, taken
 * modulo the partition count with {@link Math#floorMod} (never negative). The leader of that
 * partition is the group's coordinator.
 *
 * <p>Stable by construction: CRC-32C is a fixed polynomial, independent of the JVM, its version and
 * its {@code String.hashCode}, so every broker (and a future version of this one) maps a group to the
 * same partition as long as the partition count stays the same. The partition count of {@code
 * __consumer_offsets} must therefore never change once the topic exists.
 *
 * <p>Worked example: {@code "group-1"} in 50 partitions: CRC-32C of the 7 bytes {@code 67 72 6f 75 70
 * 2d 31} is {@code 0x28932d6a}, 680734058, whose floorMod by 50 is 8.
 *
 * <p>Thread-safety: stateless.
 */
public final class GroupPartitioner {
    private GroupPartitioner() {}

    /**
     * @param groupId the group id, non-null (an empty id maps like any other string)
     * @param numPartitions the partition count of {@code __consumer_offsets}, &gt;= 1
     * @return the partition index, 0..numPartitions-1
     * @throws IllegalArgumentException when {@code numPartitions} &lt; 1
     */
    public static int partitionFor(String groupId, int numPartitions) {
        if (numPartitions < 1) {
            throw new IllegalArgumentException("numPartitions must be >= 1: " + numPartitions);
        }
        CRC32C crc = new CRC32C();
        crc.update(groupId.getBytes(StandardCharsets.UTF_8));
        return (int) Math.floorMod(crc.getValue(), (long) numPartitions);
    }
}
