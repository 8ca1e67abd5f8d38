package io.stellflow.broker.replication;

import io.stellflow.client.ClientConfig;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowProducer;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.record.RecordBatchReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The checker's load: idempotent producers (our default, issue #20; each with its own {@code acks})
 * send unique values {@code p<producer>-<seq>} to every partition in turn (at most {@link #MAX_IN_FLIGHT} unacknowledged each,
 * a pause of {@code sendPauseMs} between sends) and record each acknowledgement in the {@link Ledger};
 * one consumer thread per partition long-polls the partition's committed leader (from the
 * controller's image) with raw Fetch v0 requests, so it sees every answer's high watermark, and
 * reports the HW, each record (offset, value) and any gap to the ledger.
 *
 * <p>A consumer whose position is out of range re-reads the partition from the leader's log start
 * (so later reads still compare values at offsets), after recording an {@code OUT_OF_RANGE}
 * violation when its position was not above the highest HW it had seen (committed data is gone).
 *
 * <p>Thread-safety: {@link #start}, {@link #stopProducing} and {@link #close} from the test thread;
 * {@link #position} from any thread.
 */
final class Workload implements AutoCloseable {
    static final int MAX_IN_FLIGHT = 64;

    private final FaultCluster cluster;
    private final String topic;
    private final Ledger ledger;
    private final String[] producerAcks;
    private final long sendPauseMs;
    private final List<Thread> threads = new ArrayList<>();
    private final List<StellflowProducer> producers = new ArrayList<>();
    private final List<Semaphore> inFlight = new ArrayList<>();
    private final AtomicLongArray positions;
    private final NetworkClient network;
    private volatile boolean producing;
    private volatile boolean consuming;

    /**
     * @param producerAcks the {@code acks} of each producer; only {@code -1} acknowledgements go to the
     *     ledger as records that must survive (others are counted in {@link Ledger#weakAcks})
     */
    Workload(FaultCluster cluster, String topic, Ledger ledger, String[] producerAcks, long sendPauseMs) {
        this.cluster = cluster;
        this.topic = topic;
        this.ledger = ledger;
        this.producerAcks = producerAcks.clone();
        this.sendPauseMs = sendPauseMs;
        this.positions = new AtomicLongArray(ledger.partitions());
        Properties cp = new Properties();
        cp.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        cp.setProperty("request.timeout.ms", "3000");
        cp.setProperty("socket.connection.setup.timeout.ms", "2000");
        this.network = new NetworkClient(ClientConfig.from(cp, "checker-consumer"));
    }

    /** A plain (non-idempotent) producer's settings, as the fault scenarios of issue #6 use. */
    static Properties producerProps(FaultCluster cluster, String acks) {
        return producerProps(cluster, acks, false);
    }

    /**
     * The checker's producer settings; {@code idempotent} leaves {@code enable.idempotence} at our
     * default (true), so the {@link Ledger} counts a value stored twice as a {@code DUPLICATE}.
     */
    static Properties producerProps(FaultCluster cluster, String acks, boolean idempotent) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        p.setProperty("acks", acks);
        if (!idempotent) {
            p.setProperty("enable.idempotence", "false");
        }
        p.setProperty("linger.ms", "2");
        p.setProperty("request.timeout.ms", "3000");
        p.setProperty("timeout.ms", "3000");
        p.setProperty("delivery.timeout.ms", "15000");
        p.setProperty("retry.backoff.ms", "50");
        p.setProperty("retry.backoff.max.ms", "500");
        p.setProperty("max.block.ms", "10000");
        p.setProperty("socket.connection.setup.timeout.ms", "2000");
        return p;
    }

    void start() {
        producing = true;
        consuming = true;
        for (int k = 0; k < producerAcks.length; k++) {
            StellflowProducer producer = new StellflowProducer(producerProps(cluster, producerAcks[k], true));
            if (!producerAcks[k].equals("-1")) {
                ledger.atLeastOnce("p" + k + "-"); // idempotence needs acks=all: this one is at-least-once
            }
            Semaphore window = new Semaphore(MAX_IN_FLIGHT);
            producers.add(producer);
            inFlight.add(window);
            int id = k;
            threads.add(Thread.ofPlatform()
                    .name("checker-producer-" + k)
                    .daemon(true)
                    .start(() -> produce(id, producer, window, producerAcks[id].equals("-1"))));
        }
        for (int p = 0; p < ledger.partitions(); p++) {
            int partition = p;
            threads.add(Thread.ofVirtual().name("checker-consumer-" + p).start(() -> consume(partition)));
        }
    }

    private void produce(int id, StellflowProducer producer, Semaphore window, boolean durable) {
        long seq = 0;
        int partitions = ledger.partitions();
        try {
            while (producing) {
                if (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                int partition = (int) ((seq + id) % partitions);
                String value = "p" + id + "-" + seq++;
                producer.send(new ProducerRecord(topic, partition, null, value.getBytes(StandardCharsets.UTF_8)))
                        .whenComplete((md, err) -> {
                            window.release();
                            if (err == null && !durable) {
                                ledger.weakAcks.incrementAndGet();
                            } else if (err == null) {
                                ledger.acked(md.partition(), md.offset(), value);
                            } else {
                                ledger.failedSends.incrementAndGet();
                            }
                        });
                if (sendPauseMs > 0) {
                    Thread.sleep(sendPauseMs);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            ledger.violation("PRODUCER_CRASHED", -1, e.toString());
        }
    }

    /** Stops sending and waits until every send is acknowledged or failed. */
    void stopProducing(long timeoutMs) throws InterruptedException {
        producing = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (Semaphore window : inFlight) {
            long left = deadline - System.nanoTime();
            if (!window.tryAcquire(MAX_IN_FLIGHT, Math.max(0, left), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("sends still unanswered after " + timeoutMs + " ms");
            }
            window.release(MAX_IN_FLIGHT);
        }
    }

    /** What the consumer of {@code partition} has read through (its next offset). */
    long position(int partition) {
        return positions.get(partition);
    }

    /** One partition's Fetch answer, records decoded. */
    record Answer(short errorCode, long highWatermark, long logStartOffset, List<ReplicaLog.Rec> records) {}

    /** One consumer Fetch (v0, no wait) of {@code topic}-{@code partition} at {@code offset} from {@code broker}. */
    static Answer fetchOnce(NetworkClient network, HostPort broker, String topic, int partition, long offset)
            throws Exception {
        FetchRequest req = new FetchRequest(
                FetchRequest.CONSUMER_REPLICA_ID,
                0,
                0,
                1 << 20,
                FetchRequest.READ_UNCOMMITTED,
                0,
                List.of(new FetchRequest.FetchTopic(
                        topic, List.of(new FetchRequest.FetchPartition(partition, -1, offset, -1L, 1 << 20)))));
        return network.send(broker, ApiKeys.FETCH, req::write, body -> decode(body, offset))
                .get(10, TimeUnit.SECONDS);
    }

    private void consume(int partition) {
        long pos = 0;
        while (consuming) {
            int leader = cluster.leaderOf(topic, partition);
            if (leader < 0) {
                sleep(50);
                continue;
            }
            int brokerId = FaultCluster.brokerId(leader);
            long fetchOffset = pos;
            FetchRequest req = new FetchRequest(
                    FetchRequest.CONSUMER_REPLICA_ID,
                    200,
                    1,
                    1 << 20,
                    FetchRequest.READ_UNCOMMITTED,
                    0,
                    List.of(new FetchRequest.FetchTopic(
                            topic,
                            List.of(new FetchRequest.FetchPartition(partition, -1, fetchOffset, -1L, 1 << 20)))));
            Answer a;
            try {
                a = network.send(cluster.address(leader), ApiKeys.FETCH, req::write, body -> decode(body, fetchOffset))
                        .get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                sleep(50); // broker down, cut or frozen: try the (maybe new) leader again
                continue;
            }
            if (a.errorCode() == Errors.NONE) {
                ledger.highWatermark(partition, a.highWatermark(), brokerId);
                for (ReplicaLog.Rec r : a.records()) {
                    if (r.offset() < pos) {
                        continue; // the batch started before the position
                    }
                    if (r.offset() != pos) {
                        ledger.violation(
                                "GAP",
                                partition,
                                "consumer at " + pos + " got offset " + r.offset() + " next from broker " + brokerId);
                    }
                    ledger.consumed(partition, r.offset(), r.value(), a.highWatermark(), brokerId);
                    pos = r.offset() + 1;
                }
                positions.set(partition, pos);
            } else if (a.errorCode() == Errors.OFFSET_OUT_OF_RANGE) {
                if (a.highWatermark() >= 0) {
                    ledger.highWatermark(partition, a.highWatermark(), brokerId);
                }
                if (pos <= ledger.maxHwSeen(partition) && pos >= a.logStartOffset()) {
                    ledger.violation(
                            "OUT_OF_RANGE",
                            partition,
                            "consumer position " + pos + " (HW seen " + ledger.maxHwSeen(partition)
                                    + ") out of range at"
                                    + " broker " + brokerId + " (log start " + a.logStartOffset() + ", HW "
                                    + a.highWatermark() + ")");
                }
                pos = Math.max(0, a.logStartOffset());
                positions.set(partition, Math.min(positions.get(partition), pos));
            } else {
                sleep(20); // not leader yet, leader not available, ...: metadata catches up
            }
        }
    }

    private static Answer decode(io.netty.buffer.ByteBuf body, long fetchOffset) {
        FetchResponse.PartitionData p =
                FetchResponse.read(body).responses().get(0).partitions().get(0);
        List<ReplicaLog.Rec> recs = new ArrayList<>();
        if (p.errorCode() == Errors.NONE && p.records() != null && p.records().isReadable()) {
            RecordBatchReader.decode(
                    p.records(),
                    fetchOffset,
                    (offset, ts, key, value, headers) ->
                            recs.add(new ReplicaLog.Rec(offset, new String(value, StandardCharsets.UTF_8))));
        }
        return new Answer(p.errorCode(), p.highWatermark(), p.logStartOffset(), recs);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws InterruptedException {
        producing = false;
        consuming = false;
        for (Thread t : threads) {
            t.join(10_000);
        }
        for (StellflowProducer p : producers) {
            p.close();
        }
        network.close();
    }
}
