package io.stellflow.client;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Chooses a partition for records without an explicit one: a hash of the key when there is one
 * (stable across runs and processes), otherwise a "sticky" partition per topic that moves on to
 * the next partition each time its batch fills, so keyless records form full batches.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class Partitioner {
    private final ConcurrentHashMap<String, Integer> sticky = new ConcurrentHashMap<>();

    /** The partition for {@code key} (may be null) among {@code numPartitions > 0}. */
    public int partition(String topic, byte[] key, int numPartitions) {
        if (key != null) {
            return (hash(key) & 0x7fffffff) % numPartitions;
        }
        Integer p = sticky.get(topic); // get first: computeIfAbsent's capturing lambda is an allocation per record
        if (p == null) {
            p = sticky.computeIfAbsent(topic, t -> ThreadLocalRandom.current().nextInt(numPartitions));
        }
        return p < numPartitions ? p : 0;
    }

    /** Called when the batch a keyless record of {@code topic} went into on {@code partition} is full. */
    public void onBatchFull(String topic, int partition, int numPartitions) {
        sticky.replace(topic, partition, (partition + 1) % numPartitions);
    }

    /**
     * A 32-bit hash of the key bytes: 4-byte little-endian words folded in with a multiply-rotate
     * step, then an avalanche finish so that keys differing in one bit spread over partitions.
     */
    static int hash(byte[] key) {
        int h = 0x9747b28c ^ key.length;
        int i = 0;
        for (; i + 4 <= key.length; i += 4) {
            int w = (key[i] & 0xff) | (key[i + 1] & 0xff) << 8 | (key[i + 2] & 0xff) << 16 | (key[i + 3] & 0xff) << 24;
            w *= 0xcc9e2d51;
            w = Integer.rotateLeft(w, 15);
            w *= 0x1b873593;
            h ^= w;
            h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
        }
        int tail = 0;
        for (int shift = 0; i < key.length; i++, shift += 8) {
            tail |= (key[i] & 0xff) << shift;
        }
        h ^= tail * 0xcc9e2d51;
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }
}
