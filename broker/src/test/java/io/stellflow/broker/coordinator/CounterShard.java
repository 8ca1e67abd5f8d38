package io.stellflow.broker.coordinator;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A tiny shard for the runtime's tests: named counters. A record is key = the counter's name in
 * UTF-8, value = its new total as 8 big-endian bytes (null: the counter is deleted). A counter may be
 * given an expiry time: {@link #poll} deletes it then (a tombstone). Replayed offsets are kept so a
 * test can check a load saw exactly the log's records.
 */
final class CounterShard implements CoordinatorShard {
    final int partition;
    final Map<String, Long> counters = new TreeMap<>();
    final Map<String, Long> expiries = new TreeMap<>();
    final List<Long> replayedOffsets = new ArrayList<>();
    boolean loaded;
    long loadedAtMs = -1;
    /** When set, each replay waits for it (a slow load). */
    volatile CountDownLatch replayGate;

    CounterShard(int partition) {
        this.partition = partition;
    }

    static byte[] key(String name) {
        return name.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] value(long total) {
        return ByteBuffer.allocate(8).putLong(total).array();
    }

    /** Adds {@code delta} to {@code name}; answers the new total. */
    CoordinatorResult<Long> add(String name, long delta) {
        long total = counters.getOrDefault(name, 0L) + delta;
        counters.put(name, total);
        return new CoordinatorResult<>(List.of(new CoordinatorRecord(key(name), value(total))), total);
    }

    /** As {@link #add}, written as a transactional batch of producer {@code producerId}. */
    CoordinatorResult<Long> addInTransaction(String name, long delta, long producerId, short epoch, long sequence) {
        CoordinatorResult<Long> r = add(name, delta);
        return new CoordinatorResult<>(
                r.records(), r.response(), new CoordinatorResult.Transaction(producerId, epoch, sequence));
    }

    /** Deletes {@code name} at {@code atMs} (runtime clock); writes nothing now. */
    CoordinatorResult<Void> expireAt(String name, long atMs) {
        expiries.put(name, atMs);
        return CoordinatorResult.of(null);
    }

    long get(String name) {
        return counters.getOrDefault(name, 0L);
    }

    @Override
    public void replay(long offset, byte[] key, byte[] value) {
        CountDownLatch gate = replayGate;
        if (gate != null) {
            try {
                gate.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (key.length == 0) {
            throw new IllegalArgumentException("empty key at " + offset);
        }
        replayedOffsets.add(offset);
        String name = new String(key, StandardCharsets.UTF_8);
        if (value == null) {
            counters.remove(name);
        } else {
            counters.put(name, ByteBuffer.wrap(value).getLong());
        }
    }

    /** Transactional records and markers the load saw, in order ("txn 1000/1 x@1", "marker 2 1000 seq 3@0"). */
    final List<String> replayedTransactional = new ArrayList<>();

    @Override
    public void replayTransactional(long offset, long producerId, short producerEpoch, byte[] key, byte[] value) {
        replayedTransactional.add("txn " + producerId + "/" + producerEpoch + " "
                + new String(key, StandardCharsets.UTF_8) + "@" + offset);
    }

    @Override
    public void replayMarker(
            long offset, long producerId, short producerEpoch, short controlType, long transactionSequence) {
        replayedTransactional.add("marker " + controlType + " " + producerId + "/" + producerEpoch + " seq "
                + transactionSequence + "@" + offset);
    }

    @Override
    public void onLoaded(long nowMs) {
        loaded = true;
        loadedAtMs = nowMs;
    }

    @Override
    public CoordinatorResult<Void> poll(long nowMs) {
        List<CoordinatorRecord> records = new ArrayList<>();
        expiries.entrySet().removeIf(e -> {
            if (e.getValue() > nowMs) {
                return false;
            }
            counters.remove(e.getKey());
            records.add(new CoordinatorRecord(key(e.getKey()), null));
            return true;
        });
        return new CoordinatorResult<>(records, null);
    }

    /** The number of counters, for the runtime's published entry count. */
    @Override
    public long entryCount() {
        return counters.size();
    }

    @Override
    public long nextDeadlineMs() {
        long next = Long.MAX_VALUE;
        for (long t : expiries.values()) {
            next = Math.min(next, t);
        }
        return next;
    }
}
