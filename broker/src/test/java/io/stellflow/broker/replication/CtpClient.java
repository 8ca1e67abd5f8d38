package io.stellflow.broker.replication;

import io.stellflow.client.ProducerFencedException;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The third client of the checker's transactional load (issue #20): our own {@link StellflowProducer}
 * with {@code transactional.id} {@value #TRANSACTIONAL_ID}, so the v1 path runs under the faults
 * (FindCoordinator v1, InitProducerId v1 with {@code transaction.timeout.ms}, BeginTransaction v1
 * answering the transaction's sequence, Produce v2 and EndTransaction v1 carrying it, the producer's
 * own retries and reconnections), doing consume-transform-produce: each transaction sends 1 to 3
 * unique values to 2 or 3 partitions of {@link TxnWorkload#TOPIC} and commits, with {@link
 * StellflowProducer#sendOffsetsToTransaction} (TxnOffsetCommit), group {@value CtpLedger#GROUP}'s
 * offset of partition 0 of that topic to the transaction's step number (1, 2, 3 ...), then commits
 * (70%) or aborts. It pauses as the raw clients do (200-1200 ms in 1 of 8 transactions, past the
 * transaction timeout in 1 of 40: the coordinator aborts, the producer is fenced).
 *
 * <p>Outcomes, as an application sees them ({@link TxnLedger}, {@link CtpLedger}): {@code
 * commitTransaction} returned: committed. {@code abortTransaction} returned, or any failure before
 * the commit was asked (Begin, a record, the offsets), or a commit whose flush failed a record (its
 * End is never sent): aborted, whatever the abort then answers. A commit that threw otherwise (its
 * End unanswered within {@code max.block.ms} or refused) is sent once more, as Kafka's producer
 * asks: answered, committed; else unknown (all or nothing). On {@link ProducerFencedException}, an
 * unknown commit or a failed abort the producer is closed and a new one created ({@code
 * initTransactions}: a new epoch, which completes or aborts what the old one left).
 *
 * <p>Thread-safety: {@link #run} on one thread.
 */
final class CtpClient {
    static final String TRANSACTIONAL_ID = "txn-checker-ctp";
    /** The input partition whose offset the transactions commit (the topic must exist for TxnOffsetCommit). */
    static final TopicPartition INPUT = new TopicPartition(TxnWorkload.TOPIC, 0);

    private final FaultCluster cluster;
    private final TxnLedger txns;
    private final CtpLedger ctp;
    private final Random random;
    private final BooleanSupplier producing;
    private StellflowProducer producer;
    private long step = 1;

    CtpClient(FaultCluster cluster, TxnLedger txns, CtpLedger ctp, Random random, BooleanSupplier producing) {
        this.cluster = cluster;
        this.txns = txns;
        this.ctp = ctp;
        this.random = random;
        this.producing = producing;
    }

    /** The producer's settings: short timeouts, so a transaction ends within a round. */
    private Properties props() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        p.setProperty("client.id", TRANSACTIONAL_ID);
        p.setProperty("transactional.id", TRANSACTIONAL_ID);
        p.setProperty("transaction.timeout.ms", Integer.toString(TxnWorkload.TXN_TIMEOUT_MS));
        p.setProperty("linger.ms", "2");
        p.setProperty("request.timeout.ms", "3000");
        p.setProperty("delivery.timeout.ms", "8000");
        p.setProperty("max.block.ms", "6000");
        p.setProperty("retry.backoff.ms", "50");
        p.setProperty("retry.backoff.max.ms", "500");
        p.setProperty("socket.connection.setup.timeout.ms", "2000");
        return p;
    }

    void run() {
        try {
            while (producing.getAsBoolean()) {
                if (producer == null && !open()) {
                    continue;
                }
                transaction();
                sleep(150 + random.nextInt(150));
            }
        } catch (IllegalStateException e) {
            // Our calls follow the producer's states: a wrong-state refusal is a client bug.
            txns.violation("CTP_CLIENT_STATE", -1, TRANSACTIONAL_ID + ": " + e);
        } catch (RuntimeException e) {
            txns.violation("TXN_CLIENT_CRASHED", -1, TRANSACTIONAL_ID + ": " + e);
        } finally {
            if (producer != null) {
                producer.close(Duration.ofSeconds(2));
            }
        }
    }

    /** A new producer and initTransactions; false (after a pause) when it failed. */
    private boolean open() {
        StellflowProducer p = new StellflowProducer(props());
        try {
            p.initTransactions();
        } catch (StellflowException e) {
            p.close(Duration.ZERO);
            sleep(200 + random.nextInt(300));
            return false;
        }
        ctp.initialized(System.nanoTime());
        producer = p;
        return true;
    }

    /** Closes the producer; the next transaction starts with a new one. */
    private void recreate() {
        ctp.recreated.incrementAndGet();
        producer.close(Duration.ofSeconds(1));
        producer = null;
        sleep(100 + random.nextInt(200));
    }

    private void transaction() {
        try {
            producer.beginTransaction();
        } catch (ProducerFencedException e) {
            recreate();
            return;
        } catch (StellflowException e) {
            sleep(100 + random.nextInt(200)); // refused or unanswered: nothing written; READY still
            return;
        }
        TxnLedger.Txn t = txns.begin(TRANSACTIONAL_ID + "#" + step);
        CtpLedger.Step s = ctp.step(t, step);
        step++;
        List<TxnLedger.Batch> batches = new ArrayList<>();
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        boolean failed = false;
        try {
            int first = random.nextInt(TxnWorkload.PARTITIONS);
            int count = 2 + random.nextInt(TxnWorkload.PARTITIONS - 1);
            for (int i = 0; i < count; i++) {
                int partition = (first + i) % TxnWorkload.PARTITIONS;
                int n = 1 + random.nextInt(3);
                for (int v = 0; v < n; v++) {
                    String value = "t" + t.name.substring("txn-checker-".length()) + "-p" + partition + "-" + v;
                    batches.add(txns.sending(t, partition, List.of(value)));
                    sent.add(producer.send(new ProducerRecord(
                            TxnWorkload.TOPIC, partition, null, value.getBytes(StandardCharsets.UTF_8))));
                }
            }
            producer.sendOffsetsToTransaction(Map.of(INPUT, s.offset), CtpLedger.GROUP);
        } catch (StellflowException e) {
            failed = true; // a send refused, the offsets refused or unanswered: abortable or fenced
        }
        int pause = random.nextInt(40);
        if (pause == 0) {
            sleep(TxnWorkload.TXN_TIMEOUT_MS + 500 + random.nextInt(1000)); // the coordinator aborts it
        } else if (pause < 6) {
            sleep(200 + random.nextInt(1000));
        }
        if (!failed && random.nextInt(10) < 7) {
            commit(s, batches, sent);
        } else {
            abort(s, batches, sent);
        }
    }

    private void commit(CtpLedger.Step s, List<TxnLedger.Batch> batches, List<CompletableFuture<RecordMetadata>> sent) {
        try {
            producer.commitTransaction();
            record(s, batches, sent, TxnLedger.Outcome.COMMITTED);
            return;
        } catch (StellflowException e) {
            if (anyFailed(sent)) {
                // The flush failed a record: the End was never sent.
                if (e instanceof ProducerFencedException) {
                    record(s, batches, sent, TxnLedger.Outcome.ABORTED);
                    recreate();
                } else {
                    abort(s, batches, sent);
                }
                return;
            }
            if (e instanceof ProducerFencedException) {
                record(s, batches, sent, TxnLedger.Outcome.UNKNOWN); // the End was sent, then fenced
                recreate();
                return;
            }
        }
        // The End was sent and not confirmed (or refused): send the same End once more.
        try {
            producer.commitTransaction();
            ctp.commitsRetried.incrementAndGet();
            record(s, batches, sent, TxnLedger.Outcome.COMMITTED);
        } catch (StellflowException e) {
            record(s, batches, sent, TxnLedger.Outcome.UNKNOWN);
            recreate();
        }
    }

    /** No commit of this transaction was ever sent: aborted, whatever the abort answers. */
    private void abort(CtpLedger.Step s, List<TxnLedger.Batch> batches, List<CompletableFuture<RecordMetadata>> sent) {
        try {
            producer.abortTransaction();
            record(s, batches, sent, TxnLedger.Outcome.ABORTED);
        } catch (StellflowException e) {
            record(s, batches, sent, TxnLedger.Outcome.ABORTED);
            recreate(); // fenced, or the abort's End unconfirmed: a new epoch aborts it
        }
    }

    private static boolean anyFailed(List<CompletableFuture<RecordMetadata>> sent) {
        for (CompletableFuture<RecordMetadata> f : sent) {
            if (f.isCompletedExceptionally()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The acknowledged offsets into the ledger's batches, then the outcome. A commit or an End sent
     * means every record was acknowledged (the flush before it waits for each); their offsets must be
     * known before the outcome, or the transaction could be judged before the reader passed them.
     */
    private void record(
            CtpLedger.Step s,
            List<TxnLedger.Batch> batches,
            List<CompletableFuture<RecordMetadata>> sent,
            TxnLedger.Outcome outcome) {
        for (int i = 0; i < sent.size(); i++) {
            CompletableFuture<RecordMetadata> f = sent.get(i);
            RecordMetadata m = null;
            try {
                m = outcome == TxnLedger.Outcome.ABORTED ? f.getNow(null) : f.get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                if (outcome != TxnLedger.Outcome.ABORTED) {
                    txns.violation(
                            "CTP_CLIENT_STATE",
                            batches.get(i).partition,
                            s.txn.name + " " + outcome + " but a record was not acknowledged: " + e);
                }
            }
            if (m != null) {
                batches.get(i).baseOffset = m.offset();
            }
        }
        ctp.outcome(s, outcome);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
