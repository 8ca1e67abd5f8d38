package io.stellflow.broker.replication;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.TransactionalProduceTest;
import io.stellflow.broker.coordinator.GroupPartitioner;
import io.stellflow.client.BodyWriter;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.record.RecordBatchReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The checker's transactional load (issue #20), beside the replication load of {@link Workload} in
 * the same cluster and under the same faults: {@value #CLIENTS} clients drive the raw v0 protocol as
 * the public Go SDK does (InitProducerId with a transactionalId, BeginTransaction, one Produce per
 * partition with the transactionalId and an idempotent batch, EndTransaction commit or abort at
 * random) on topic {@value #TOPIC}; a {@code read_committed} {@link StellflowConsumer} reads every
 * value back, and one raw Fetch (isolation 1) reader per partition records each answer's last stable
 * offset and records. What is checked: {@link TxnLedger}. A third client, {@link CtpClient}, runs
 * our own transactional producer (v1) with consume-transform-produce group offsets, judged by {@link
 * CtpLedger} too.
 *
 * <p>Client 0 finds its coordinator as the leader of its id's {@code __transaction_state} partition
 * in the controller's image and looks again on {@code NOT_COORDINATOR} or {@code
 * COORDINATOR_NOT_AVAILABLE}; client 1 sends Init, Begin and End to a random broker, picked again
 * with each new connection, as the Go SDK sends them to its bootstrap broker (forwarding). A Produce is retried with the same batch
 * (same sequence) on retriable errors and lost answers for up to {@value #PRODUCE_DEADLINE_MS} ms;
 * if it still fails, the transaction can only have aborted (no commit is ever sent). An End whose
 * answer is lost or an error leaves the outcome unknown (all or nothing allowed). After any failure
 * the client drops its connections and calls InitProducerId again, which aborts an open transaction
 * and bumps the epoch, so a delayed request of the failed transaction is fenced. Clients sometimes
 * pause between their writes and End, once in a while past {@code transaction.default.timeout.ms}
 * (the coordinator aborts them).
 *
 * <p>Thread-safety: {@link #start}, {@link #stopProducing}, {@link #close} from the test thread;
 * {@link #readTo} from any thread.
 */
final class TxnWorkload implements AutoCloseable {
    static final String TOPIC = "txn-checked";
    static final int PARTITIONS = 3;
    static final int CLIENTS = 2;
    /**
     * Partitions of {@code __transaction_state}: two (the clients' ids land on both), not Kafka's
     * 50, since every partition is one more log each broker loads at every restart of a round.
     */
    static final int STATE_PARTITIONS = 2;

    static final int TXN_TIMEOUT_MS = 3000;
    static final long PRODUCE_DEADLINE_MS = 8000;
    static final String STATE_TOPIC = "__transaction_state";

    private final FaultCluster cluster;
    private final TxnLedger ledger;
    private final CtpLedger ctpLedger;
    private final StellflowAdmin admin;
    private final long seed;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLongArray readTo = new AtomicLongArray(PARTITIONS);
    private final NetworkClient probeNetwork;
    private volatile boolean producing;
    private volatile boolean reading;
    private final java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();

    TxnWorkload(FaultCluster cluster, TxnLedger ledger, CtpLedger ctpLedger, long seed) {
        this.cluster = cluster;
        this.ledger = ledger;
        this.ctpLedger = ctpLedger;
        this.seed = seed;
        this.probeNetwork = network(cluster, "txn-checker-lso");
        Properties ap = new Properties();
        ap.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        ap.setProperty("request.timeout.ms", "2000");
        ap.setProperty("socket.connection.setup.timeout.ms", "2000");
        ap.setProperty("retries", "3");
        ap.setProperty("retry.backoff.ms", "50");
        ap.setProperty("retry.backoff.max.ms", "500");
        this.admin = new StellflowAdmin(ap);
    }

    /**
     * Broker settings of the transactional load: a small state topic, short timeouts, one partition
     * of {@code __consumer_offsets} for the {@link CtpClient}'s group (settings of the group load,
     * when it runs too, go first).
     */
    static Map<String, String> brokerProps() {
        return Map.of(
                "offsets.topic.num.partitions",
                "1",
                "transaction.state.log.num.partitions",
                Integer.toString(STATE_PARTITIONS),
                "transaction.default.timeout.ms",
                Integer.toString(TXN_TIMEOUT_MS),
                "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                "500");
    }

    private static NetworkClient network(FaultCluster cluster, String clientId) {
        Properties cp = new Properties();
        cp.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        cp.setProperty("request.timeout.ms", "3000");
        cp.setProperty("socket.connection.setup.timeout.ms", "2000");
        return new NetworkClient(ClientConfig.from(cp, clientId));
    }

    void start() {
        producing = true;
        reading = true;
        for (int k = 0; k < CLIENTS; k++) {
            int id = k;
            running.incrementAndGet();
            threads.add(Thread.ofPlatform()
                    .name("txn-checker-client-" + k)
                    .daemon(true)
                    .start(() -> {
                        try {
                            new Client(id, new Random(seed + id)).run();
                        } finally {
                            running.decrementAndGet();
                        }
                    }));
        }
        running.incrementAndGet();
        threads.add(Thread.ofPlatform().name("txn-checker-ctp").daemon(true).start(() -> {
            try {
                new CtpClient(cluster, ledger, ctpLedger, new Random(seed + CLIENTS), () -> producing).run();
            } finally {
                running.decrementAndGet();
            }
        }));
        threads.add(Thread.ofPlatform().name("txn-checker-reader").daemon(true).start(this::read));
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            threads.add(Thread.ofVirtual().name("txn-checker-lso-" + p).start(() -> probe(partition)));
        }
    }

    /** What the read_committed consumer has read through in {@code partition} (its position). */
    long readTo(int partition) {
        return readTo.get(partition);
    }

    long[] readTo() {
        long[] r = new long[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            r[p] = readTo.get(p);
        }
        return r;
    }

    /** Stops starting transactions and waits for the clients to finish theirs. */
    void stopProducing(long timeoutMs) throws InterruptedException {
        producing = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int k = 0; k <= CLIENTS; k++) { // the raw clients and the CtpClient
            threads.get(k).join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
        if (running.get() > 0) {
            throw new AssertionError("transactional clients still running after " + timeoutMs + " ms");
        }
    }

    /** One transactional client: its id, producer id and epoch, sequences per partition. */
    private final class Client {
        private final String tid;
        private final Random random;
        private NetworkClient net;
        private long pid = -1;
        private short epoch;
        private final int[] sequences = new int[PARTITIONS];
        private long number;
        /** The broker index control requests go to (client 1), or -1: the coordinator (client 0). */
        private int bootstrap;

        Client(int id, Random random) {
            this.tid = "txn-checker-" + id;
            this.random = random;
            this.bootstrap = id == 1 ? random.nextInt(cluster.size()) : -1;
        }

        void run() {
            net = network(cluster, tid);
            try {
                while (producing) {
                    if (pid < 0 && !init()) {
                        continue;
                    }
                    transaction();
                    // About 5 transactions a second for both clients: enough to catch every fault in flight, little
                    // enough that brokers restart about as fast as without this load (docs/exactly-once.md, "Checker").
                    sleep(150 + random.nextInt(150));
                }
            } catch (RuntimeException e) {
                ledger.violation("TXN_CLIENT_CRASHED", -1, tid + ": " + e);
            } finally {
                net.close();
            }
        }

        /** Drops this client's connections and producer id: the next transaction starts with InitProducerId. */
        private void reset() {
            reconnect();
            pid = -1;
        }

        /** A new connection for the next request (a lost answer's connection may hold it still), after a back-off. */
        private void reconnect() {
            net.close();
            net = network(cluster, tid);
            if (bootstrap >= 0) {
                bootstrap = random.nextInt(cluster.size());
            }
            sleep(100 + random.nextInt(200));
        }

        /**
         * Where Init, Begin and End go: client 0 finds its coordinator (the leader of its id's
         * {@code __transaction_state} partition); client 1 sends them, as the Go SDK does, to its
         * "bootstrap" broker, a random one picked again at each new connection, and relies on the
         * broker forwarding them to the coordinator.
         */
        private HostPort coordinator() {
            if (bootstrap >= 0) {
                return cluster.address(bootstrap);
            }
            int leader = cluster.leaderOf(STATE_TOPIC, GroupPartitioner.partitionFor(tid, STATE_PARTITIONS));
            return cluster.address(leader >= 0 ? leader : random.nextInt(cluster.size()));
        }

        /** InitProducerId until it answers (or the load stops); false to try again. */
        private boolean init() {
            InitProducerIdResponse r;
            try {
                r = net.send(
                                coordinator(),
                                ApiKeys.INIT_PRODUCER_ID,
                                new InitProducerIdRequest(tid)::write,
                                InitProducerIdResponse::read)
                        .get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                producing = false;
                return false;
            } catch (Exception e) {
                reset();
                return false;
            }
            if (r.errorCode() != Errors.NONE) {
                sleep(100);
                return false;
            }
            pid = r.producerId();
            epoch = r.producerEpoch();
            java.util.Arrays.fill(sequences, 0);
            return true;
        }

        private void transaction() {
            TxnLedger.Txn t = ledger.begin(tid + "#" + number++);
            short begin = control(ApiKeys.BEGIN_TRANSACTION, new BeginTransactionRequest(tid, pid, epoch)::write);
            if (begin != Errors.NONE) {
                ledger.outcome(t, TxnLedger.Outcome.ABORTED); // no data, nothing can commit
                reset();
                return;
            }
            int first = random.nextInt(PARTITIONS);
            int count = 2 + random.nextInt(PARTITIONS - 1);
            for (int i = 0; i < count; i++) {
                int partition = (first + i) % PARTITIONS;
                List<String> values = new ArrayList<>();
                int n = 1 + random.nextInt(3);
                for (int v = 0; v < n; v++) {
                    values.add("t" + t.name.substring("txn-checker-".length()) + "-p" + partition + "-" + v);
                }
                TxnLedger.Batch b = ledger.sending(t, partition, values);
                long base = produce(partition, values);
                if (base < 0) {
                    ledger.outcome(t, TxnLedger.Outcome.ABORTED); // no commit is ever sent
                    reset();
                    return;
                }
                b.baseOffset = base;
                sequences[partition] += n;
            }
            int pause = random.nextInt(40);
            if (pause == 0) {
                sleep(TXN_TIMEOUT_MS + 500 + random.nextInt(1000)); // past the timeout: the coordinator aborts
            } else if (pause < 6) {
                sleep(200 + random.nextInt(1000));
            }
            boolean commit = random.nextInt(10) < 7;
            short end = control(ApiKeys.END_TRANSACTION, new EndTransactionRequest(tid, pid, epoch, commit)::write);
            if (end == Errors.NONE) {
                ledger.outcome(t, commit ? TxnLedger.Outcome.COMMITTED : TxnLedger.Outcome.ABORTED);
            } else {
                // A commit whose answer is lost or an error: unknown. An abort can only have aborted.
                ledger.outcome(t, commit ? TxnLedger.Outcome.UNKNOWN : TxnLedger.Outcome.ABORTED);
                reset();
            }
        }

        /**
         * A Begin or End, retried (on a new connection, at the coordinator found again) while the
         * answer is COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR or CONCURRENT_TRANSACTIONS; a lost
         * answer is not retried. Returns the last error code, or -1 for a lost answer.
         */
        private short control(short apiKey, BodyWriter body) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PRODUCE_DEADLINE_MS);
            while (true) {
                TransactionResponse r;
                try {
                    r = net.send(coordinator(), apiKey, body, TransactionResponse::read)
                            .get(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return -1;
                } catch (Exception e) {
                    return -1;
                }
                short code = r.errorCode();
                boolean retry = code == Errors.COORDINATOR_NOT_AVAILABLE
                        || code == Errors.NOT_COORDINATOR
                        || code == Errors.CONCURRENT_TRANSACTIONS;
                if (!retry || System.nanoTime() > deadline) {
                    return code;
                }
                reconnect();
            }
        }

        /**
         * One transactional Produce (acks=-1) of {@code values} to {@code partition}'s leader,
         * retried with the same batch; returns its base offset, or -1 when it failed.
         */
        private long produce(int partition, List<String> values) {
            byte[] batch =
                    TransactionalProduceTest.batch(pid, epoch, sequences[partition], values.toArray(String[]::new));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PRODUCE_DEADLINE_MS);
            while (producing || System.nanoTime() < deadline) {
                int leader = cluster.leaderOf(TOPIC, partition);
                if (leader >= 0) {
                    ProduceRequest request =
                            TransactionalProduceTest.transactionalProduce(tid, TOPIC, partition, batch, 5_000);
                    try {
                        ProduceResponse.PartitionResponse r = net.send(
                                        cluster.address(leader),
                                        ApiKeys.PRODUCE,
                                        request::write,
                                        body -> ProduceResponse.read(body)
                                                .responses()
                                                .get(0)
                                                .partitions()
                                                .get(0))
                                .get(6, TimeUnit.SECONDS);
                        if (r.errorCode() == Errors.NONE) {
                            return r.baseOffset();
                        }
                        if (!Errors.isRetriable(r.errorCode())) {
                            return -1; // fenced (timeout abort), no transaction, out of order: give up
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return -1;
                    } catch (Exception e) {
                        // lost answer, refused connection: the same batch again on a new connection
                        reconnect();
                    }
                }
                if (System.nanoTime() > deadline) {
                    return -1;
                }
                sleep(50);
            }
            return -1;
        }
    }

    /** The read_committed consumer: every value it hands out goes to the ledger. */
    private void read() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        p.setProperty("client.id", "txn-checker-reader");
        p.setProperty("isolation.level", "read_committed");
        p.setProperty("auto.offset.reset", "earliest");
        p.setProperty("enable.auto.commit", "false");
        p.setProperty("fetch.max.wait.ms", "500");
        p.setProperty("default.api.timeout.ms", "5000");
        p.setProperty("request.timeout.ms", "3000");
        p.setProperty("retry.backoff.ms", "50");
        p.setProperty("socket.connection.setup.timeout.ms", "2000");
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < PARTITIONS; i++) {
            tps.add(new TopicPartition(TOPIC, i));
        }
        while (reading) {
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(tps);
                for (TopicPartition tp : tps) {
                    consumer.seek(tp, readTo.get(tp.partition()));
                }
                while (reading) {
                    for (ConsumerRecord r : consumer.poll(Duration.ofMillis(200))) {
                        ledger.read(r.partition(), r.offset(), new String(r.value(), StandardCharsets.UTF_8));
                    }
                    for (TopicPartition tp : tps) {
                        readTo.set(tp.partition(), consumer.position(tp));
                    }
                }
            } catch (RuntimeException e) {
                // a poll that gave up (broker down, cut): a new consumer resumes at the positions
                sleep(500);
            }
        }
    }

    /** Raw read_committed Fetches of one partition: LSO and records of every answer to the ledger. */
    private void probe(int partition) {
        long pos = 0;
        while (reading) {
            int leader = cluster.leaderOf(TOPIC, partition);
            if (leader < 0) {
                sleep(50);
                continue;
            }
            long fetchOffset = pos;
            FetchRequest req = new FetchRequest(
                    FetchRequest.CONSUMER_REPLICA_ID,
                    500,
                    1,
                    1 << 20,
                    FetchRequest.READ_COMMITTED,
                    0,
                    List.of(new FetchRequest.FetchTopic(
                            TOPIC,
                            List.of(new FetchRequest.FetchPartition(partition, -1, fetchOffset, -1L, 1 << 20)))));
            Probe a;
            try {
                a = probeNetwork
                        .send(cluster.address(leader), ApiKeys.FETCH, req::write, body -> decode(body, fetchOffset))
                        .get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                sleep(50);
                continue;
            }
            if (a.errorCode() == Errors.NONE) {
                List<ReplicaLog.Rec> fresh = new ArrayList<>();
                for (ReplicaLog.Rec r : a.records()) {
                    if (r.offset() >= pos) {
                        fresh.add(r);
                    }
                }
                ledger.rawAnswer(partition, a.lastStableOffset(), FaultCluster.brokerId(leader), fresh);
                if (!fresh.isEmpty()) {
                    pos = fresh.get(fresh.size() - 1).offset() + 1;
                } else if (pos < a.lastStableOffset()) {
                    pos = a.lastStableOffset(); // only markers below the LSO
                }
            } else {
                sleep(20);
            }
        }
    }

    private record Probe(short errorCode, long lastStableOffset, List<ReplicaLog.Rec> records) {}

    private static Probe decode(ByteBuf body, long fetchOffset) {
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
        return new Probe(p.errorCode(), p.lastStableOffset(), recs);
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
        reading = false;
        for (Thread t : threads) {
            t.join(15_000);
        }
        probeNetwork.close();
        admin.close();
    }

    /**
     * Reads group {@value CtpLedger#GROUP}'s committed offset of {@link CtpClient#INPUT} into the
     * {@link CtpLedger} (OffsetFetch at the group's coordinator), trying again for up to {@code
     * timeoutMs}.
     *
     * @return whether it was read
     */
    boolean readGroupOffset(int round, long timeoutMs) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            long sentNs = System.nanoTime();
            try {
                Long offset = admin.groups().committedOffsets(CtpLedger.GROUP).get(CtpClient.INPUT);
                ctpLedger.observed(round, offset == null ? -1 : offset, sentNs);
                return true;
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    return false;
                }
                sleep(200);
            }
        }
    }
}
