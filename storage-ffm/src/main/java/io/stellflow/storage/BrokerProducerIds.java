package io.stellflow.storage;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The producer-id entries every log of one broker keeps ({@link ProducerStateManager}), counted
 * together, and their bound {@code producer.id.max.per.broker} (issue #20).
 *
 * <p>What counts: every entry of every open log on the broker, leader and follower replicas alike,
 * and those rebuilt from snapshots and the log at open; all of them take heap. What is bounded: only
 * a leader's append of a producer id its partition does not know ({@link
 * ProducerStateManager#check}) is refused while the count is at the bound. A follower, a replay at
 * open and a transaction marker never refuse (a replica must hold what its leader accepted), so the
 * count may exceed the bound by what followers copied; see {@code docs/exactly-once.md}, "Limits and
 * expiry". The count changes only when an entry is created, expired, cleared or loaded, never on the
 * append of a producer the partition knows.
 *
 * <p>The check and the increment are not one atomic step (each partition works under its own lock):
 * appends of new ids on several partitions at the same moment may pass the bound by at most one per
 * appending thread.
 *
 * <p>Thread-safety: any thread.
 */
public final class BrokerProducerIds {
    private final long max;
    private final AtomicLong count = new AtomicLong();

    /**
     * @param max {@code producer.id.max.per.broker}: at this count a new producer id's first append
     *     on a leader is refused (&gt; 0)
     */
    public BrokerProducerIds(long max) {
        if (max <= 0) {
            throw new IllegalArgumentException("producer.id.max.per.broker must be > 0: " + max);
        }
        this.max = max;
    }

    /** The bound, {@code producer.id.max.per.broker}. */
    public long max() {
        return max;
    }

    /** Producer-id entries held by the broker's logs now. */
    public long count() {
        return count.get();
    }

    /** Whether a leader refuses a new producer id now (the count is at or above the bound). */
    boolean full() {
        return count.get() >= max;
    }

    void added(long n) {
        if (n != 0) {
            count.addAndGet(n);
        }
    }

    void removed(long n) {
        if (n != 0) {
            count.addAndGet(-n);
        }
    }
}
