package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A batch refused as too large whose halves the sender thread is building ({@link
 * ProducerSender#splitBuiltHook} holds it there) while the producer's state changes under it: a
 * transaction's abort begins, the transaction becomes abortable or fenced, the producer closes, its
 * producer id changes, its delivery timeout passes. Nothing of an aborting transaction is sent after
 * the abort began, the abort waits for the split and does not hang, and no record is stored twice.
 */
class ProducerSplitInFlightTest {
    private static final TopicPartition P0 = new TopicPartition("t", 0);
    /** Leaderless ({@link FakeBroker#leaderless}): a record sent to it stays queued. */
    private static final TopicPartition P1 = new TopicPartition("t", 1);

    private static final long WAIT_S = 10;

    /**
     * Holds the first split on the sender thread, its halves built, until {@link #release}; later
     * splits go through.
     */
    private static final class HeldSplit implements Consumer<TopicPartition> {
        final CountDownLatch built = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        private final AtomicBoolean first = new AtomicBoolean(true);

        @Override
        public void accept(TopicPartition tp) {
            if (!first.compareAndSet(true, false)) {
                return;
            }
            built.countDown();
            try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the split");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void awaitBuilt() throws InterruptedException {
            assertThat(built.await(WAIT_S, TimeUnit.SECONDS))
                    .as("a refused batch's halves built")
                    .isTrue();
        }
    }

    /** A broker that is its own transaction coordinator, refusing batches of more than 3 records. */
    private static FakeBroker transactionalBroker() throws InterruptedException {
        FakeBroker broker = new FakeBroker();
        broker.transactionCoordinator = true;
        broker.createTopic("t", 2);
        broker.leaderless = Set.of(P1);
        broker.maxBatchRecords = 3;
        return broker;
    }

    private static Properties props(FakeBroker broker, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        p.setProperty("linger.ms", "60000"); // a flush sends: one batch of every record
        p.setProperty("batch.size", "1048576");
        p.setProperty("retry.backoff.ms", "20");
        p.setProperty("max.block.ms", "10000");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    private static List<CompletableFuture<RecordMetadata>> send(StellflowProducer producer, int records) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int i = 0; i < records; i++) {
            futures.add(producer.send(new ProducerRecord("t", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8))));
        }
        return futures;
    }

    /** Runs {@code call} on a thread of its own (flush, abort and close block). */
    private static CompletableFuture<Void> async(ThrowingCall call) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread.ofPlatform().daemon(true).start(() -> {
            try {
                call.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        return done;
    }

    @FunctionalInterface
    private interface ThrowingCall {
        void run() throws Exception;
    }

    /** The cause each of {@code futures} failed with, waiting up to {@link #WAIT_S} for each. */
    private static List<Throwable> failures(List<CompletableFuture<RecordMetadata>> futures) {
        List<Throwable> causes = new ArrayList<>();
        for (CompletableFuture<RecordMetadata> f : futures) {
            assertThat(f).failsWithin(WAIT_S, TimeUnit.SECONDS);
            causes.add(f.exceptionNow());
        }
        return causes;
    }

    /** The values stored on {@code tp}, in offset order, decompressed. */
    private static List<String> values(FakeBroker broker, TopicPartition tp) {
        List<String> values = new ArrayList<>();
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            for (FakeBroker.StoredBatch b : broker.log(tp)) {
                ByteBuf buf = Unpooled.wrappedBuffer(b.bytes());
                buf.setInt(0, 0);
                RecordBatchReader.decode(
                        buf, 0, true, d, (o, ts, k, v, h) -> values.add(new String(v, StandardCharsets.UTF_8)));
            }
        }
        return values;
    }

    /**
     * The abort begins (its queued records already failed) while the halves of the transaction's
     * refused batch are being built: they are failed with {@link TransactionAbortedException}, never
     * sent, and EndTransaction(abort) goes out once they are; {@code close()} aborts the same way.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"abortTransaction", "close"})
    void anAbortBegunWhileTheHalvesAreBuiltFailsThemUnsent(String how) throws Exception {
        try (FakeBroker broker = transactionalBroker()) {
            StellflowProducer producer = new StellflowProducer(props(broker, "transactional.id", "split-abort"));
            try {
                HeldSplit held = new HeldSplit();
                producer.sender().splitBuiltHook(held);
                producer.initTransactions();
                producer.beginTransaction();
                List<CompletableFuture<RecordMetadata>> futures = send(producer, 10);
                CompletableFuture<Void> flushed = async(producer::flush);
                held.awaitBuilt();
                CompletableFuture<RecordMetadata> queued = producer.send(new ProducerRecord("t", 1, null, new byte[1]));
                CompletableFuture<Void> aborted =
                        async(how.equals("close") ? producer::close : producer::abortTransaction);
                // The abort's first step failed the queued record: it has begun, the split is still held.
                assertThat(failures(List.of(queued))).singleElement().isInstanceOf(TransactionAbortedException.class);
                held.release.countDown();
                aborted.get(WAIT_S, TimeUnit.SECONDS);
                flushed.get(WAIT_S, TimeUnit.SECONDS);
                assertThat(failures(futures))
                        .allSatisfy(e -> assertThat(e)
                                .isInstanceOf(TransactionAbortedException.class)
                                .hasMessageContaining("was aborted before this record was sent"));
                assertThat(broker.log(P0))
                        .as("nothing of the aborted transaction appended")
                        .isEmpty();
                assertThat(broker.events).containsExactly("produce t-0", "end abort");
            } finally {
                producer.close();
            }
        }
    }

    /**
     * The refusal itself comes back after the abort began (the batch was in flight): its halves
     * are not built into requests either; the records fail with {@link TransactionAbortedException}.
     */
    @Test
    void aRefusalAnsweredAfterTheAbortBeganIsNotSplitIntoNewRequests() throws Exception {
        try (FakeBroker broker = transactionalBroker()) {
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "transactional.id", "split-abort-late"))) {
                producer.initTransactions();
                producer.beginTransaction();
                broker.holdProduceResponses();
                List<CompletableFuture<RecordMetadata>> futures = send(producer, 10);
                CompletableFuture<Void> flushed = async(producer::flush);
                assertThat(broker.heldProduceResponses.tryAcquire(WAIT_S, TimeUnit.SECONDS))
                        .as("the refusal held at the broker")
                        .isTrue();
                CompletableFuture<RecordMetadata> queued = producer.send(new ProducerRecord("t", 1, null, new byte[1]));
                CompletableFuture<Void> aborted = async(producer::abortTransaction);
                assertThat(failures(List.of(queued))).singleElement().isInstanceOf(TransactionAbortedException.class);
                broker.releaseProduceResponses();
                aborted.get(WAIT_S, TimeUnit.SECONDS);
                flushed.get(WAIT_S, TimeUnit.SECONDS);
                assertThat(failures(futures))
                        .allSatisfy(e -> assertThat(e).isInstanceOf(TransactionAbortedException.class));
                assertThat(broker.log(P0)).isEmpty();
                assertThat(broker.events).containsExactly("produce t-0", "end abort");
            }
        }
    }

    /**
     * The transaction becomes abortable (another record failed) or is fenced while the halves are
     * built: they fail with the transaction's error, unsent; an abortable one then aborts normally.
     */
    @ParameterizedTest(name = "code={0}")
    @CsvSource({"14, false", "27, true"})
    void aTransactionThatCannotCommitAnyMoreFailsTheHalvesUnsent(short code, boolean fenced) throws Exception {
        try (FakeBroker broker = transactionalBroker()) {
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "transactional.id", "split-abortable"))) {
                HeldSplit held = new HeldSplit();
                producer.sender().splitBuiltHook(held);
                producer.initTransactions();
                producer.beginTransaction();
                List<CompletableFuture<RecordMetadata>> futures = send(producer, 10);
                CompletableFuture<Void> flushed = async(producer::flush);
                held.awaitBuilt();
                producer.transactions().batchFailed(code); // as the I/O thread on another partition's failure
                held.release.countDown();
                flushed.get(WAIT_S, TimeUnit.SECONDS);
                for (Throwable e : failures(futures)) {
                    if (fenced) {
                        assertThat(e).isInstanceOf(ProducerFencedException.class);
                    } else {
                        assertThat(e)
                                .isInstanceOf(StellflowException.class)
                                .hasMessageContaining("not sent: the transaction can only be aborted");
                        assertThat(((StellflowException) e).errorCode()).isEqualTo(code);
                    }
                }
                if (!fenced) {
                    producer.abortTransaction();
                }
                assertThat(broker.log(P0)).isEmpty();
                assertThat(broker.events)
                        .containsExactly(
                                fenced ? new String[] {"produce t-0"} : new String[] {"produce t-0", "end abort"});
            }
        }
    }

    /**
     * The producer id changes while the halves of an idempotent batch are built (a reset that beat
     * the split; the sender's own resets wait for splits, this is the guard where the halves take
     * their stamp). A batch in doubt under its old stamp (an attempt was appended, its answer lost,
     * and the retry refused as too large: the leader's limit went down) fails with its outcome
     * unknown: stored once, not twice. One not in doubt is split and its halves are stamped anew
     * under the new id, in order. {@code flush()} returns with every record completed either way.
     */
    @ParameterizedTest(name = "in doubt={0}")
    @ValueSource(booleans = {true, false})
    void aNewProducerIdWhileTheHalvesAreBuiltNeverStoresABatchTwice(boolean inDoubt) throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            if (inDoubt) {
                broker.failNextProduce(P0, Errors.NONE); // appended ...
                broker.dropNextProduceResponses(1); // ... and the answer lost
            }
            broker.failNextProduce(P0, Errors.MESSAGE_TOO_LARGE);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "enable.idempotence", "true"))) {
                AtomicBoolean first = new AtomicBoolean(true);
                producer.sender().splitBuiltHook(tp -> {
                    if (first.compareAndSet(true, false)) {
                        producer.sender().producerId(5000, (short) 0);
                    }
                });
                List<CompletableFuture<RecordMetadata>> futures = send(producer, 10);
                producer.flush();
                assertThat(futures).allMatch(CompletableFuture::isDone);
                if (inDoubt) {
                    assertThat(failures(futures))
                            .allSatisfy(e -> assertThat(e)
                                    .isInstanceOf(StellflowException.class)
                                    .hasMessageContaining("outcome unknown")
                                    .hasMessageContaining("not sent again under the producer's new id"));
                } else {
                    for (int i = 0; i < futures.size(); i++) {
                        assertThat(futures.get(i).get().offset()).isEqualTo(i);
                    }
                    assertThat(broker.sequencesSeen)
                            .extracting(s -> s[0] + "/" + s[1])
                            .containsExactly("5000/0", "5000/5");
                }
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                expected.add("v" + i);
            }
            assertThat(values(broker, P0)).as("every record once, in order").containsExactlyElementsOf(expected);
        }
    }

    /**
     * The producer id changes while the halves of a batch in doubt are compressed (they carry its
     * stamp from the moment they are made): each fails once with its outcome unknown, the one being
     * compressed once its compression is done, nothing is sent again, and every buffer goes back to
     * the producer's pool once (one given back twice would be handed to two batches at once).
     */
    @Test
    void aNewProducerIdWhileTheHalvesOfABatchInDoubtAreCompressedFailsEachOnce() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.failNextProduce(P0, Errors.NONE); // appended ...
            broker.dropNextProduceResponses(1); // ... the answer lost: in doubt
            broker.failNextProduce(P0, Errors.MESSAGE_TOO_LARGE);
            // Call 1 compresses the batch, calls 2 and 3 its halves: the first half waits at the gate.
            ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.LZ4, 2, 2, 0);
            ProducerConfig config =
                    ProducerConfig.from(props(broker, "enable.idempotence", "true", "compression.type", "lz4"));
            try (StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()))) {
                List<AtomicInteger> completions = new ArrayList<>();
                List<CompletableFuture<Exception>> outcomes = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    AtomicInteger n = new AtomicInteger();
                    CompletableFuture<Exception> outcome = new CompletableFuture<>();
                    completions.add(n);
                    outcomes.add(outcome);
                    producer.send(
                            new ProducerRecord("t", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)), (m, e) -> {
                                n.incrementAndGet();
                                outcome.complete(e);
                            });
                }
                CompletableFuture<Void> flushed = async(producer::flush);
                assertThat(script.atGate.await(WAIT_S, TimeUnit.SECONDS))
                        .as("the first half being compressed")
                        .isTrue();
                producer.sender().producerId(5000, (short) 0); // a reset while the halves are compressed
                script.open();
                flushed.get(WAIT_S, TimeUnit.SECONDS);
                for (CompletableFuture<Exception> outcome : outcomes) {
                    assertThat(outcome.get(WAIT_S, TimeUnit.SECONDS))
                            .isInstanceOf(StellflowException.class)
                            .hasMessageContaining("outcome unknown");
                }
                assertThat(completions)
                        .allSatisfy(n ->
                                assertThat(n.get()).as("callbacks per record").isEqualTo(1));
                assertThat(script.calls.get())
                        .as("the batch and both halves compressed at most once")
                        .isLessThanOrEqualTo(3);
                assertEveryIdleBufferOnce(producer.batchBuffers());
            }
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                expected.add("v" + i);
            }
            assertThat(values(broker, P0))
                    .as("stored once, by the first attempt")
                    .containsExactlyElementsOf(expected);
        }
    }

    /**
     * The producer closes forcefully while a refused batch's halves are built (a {@code
     * close(Duration.ZERO)} from the sender thread: it forces and does not wait): the records fail
     * with "producer is closed forcefully", and the message says what became of their batch. It was
     * sent and refused as too large, so "never sent" would be false; the refusal is the cause.
     */
    @Test
    void aForcedCloseWhileTheHalvesAreBuiltSaysTheBatchWasRefusedNotNeverSent() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 3;
            StellflowProducer producer = new StellflowProducer(props(broker, "enable.idempotence", "false"));
            AtomicBoolean first = new AtomicBoolean(true);
            producer.sender().splitBuiltHook(tp -> {
                if (first.compareAndSet(true, false)) {
                    producer.close(Duration.ZERO);
                }
            });
            List<CompletableFuture<RecordMetadata>> futures = send(producer, 10);
            CompletableFuture<Void> flushed = async(producer::flush);
            assertThat(failures(futures)).allSatisfy(e -> {
                assertThat(e)
                        .isInstanceOf(ProducerClosedException.class)
                        .hasMessageContaining("producer is closed forcefully")
                        .hasMessageContaining("after the broker refused the batch as too large (attempt 1)")
                        .hasMessageContaining("before it was split and sent again in parts")
                        .hasMessageNotContaining("never sent");
                assertThat(e.getCause()).isInstanceOf(RecordTooLargeException.class);
            });
            flushed.get(WAIT_S, TimeUnit.SECONDS);
            assertThat(broker.log(P0)).as("nothing appended").isEmpty();
            assertThat(producer.batchBuffers().outstandingBuffers()).isZero();
        }
    }

    /** Takes every idle buffer of {@code pool} (until it must allocate) and checks none comes twice. */
    private static void assertEveryIdleBufferOnce(ProducerBufferPool pool) {
        Set<ByteBuf> taken = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        List<ByteBuf> all = new ArrayList<>();
        long allocated = pool.allocatedBuffers();
        for (int i = 0; i < 64; i++) {
            ByteBuf b = pool.take(1);
            all.add(b);
            if (pool.allocatedBuffers() != allocated) {
                break; // no idle buffer left: this one is new
            }
            assertThat(taken.add(b)).as("idle buffer %s handed out twice", b).isTrue();
        }
        all.forEach(pool::give);
    }

    /**
     * {@code delivery.timeout.ms} passes while the halves are built: they expire at once, with the
     * split named in their error, and are never sent. The halves were never refused themselves, so
     * their error is a delivery timeout that says so, not MESSAGE_TOO_LARGE (12) nor a {@link
     * RecordTooLargeException} cause taken over from the refused batch.
     */
    @Test
    void halvesWhoseDeliveryTimeoutPassedWhileTheyWereBuiltExpireUnsent() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 3;
            long deliveryTimeoutMs = 1000;
            try (StellflowProducer producer = new StellflowProducer(props(
                    broker,
                    "enable.idempotence",
                    "false",
                    "delivery.timeout.ms",
                    Long.toString(deliveryTimeoutMs),
                    "request.timeout.ms",
                    "500",
                    // delivery.timeout.ms >= linger.ms + request.timeout.ms; the flush below sends
                    "linger.ms",
                    "500"))) {
                long sentNs = System.nanoTime();
                producer.sender().splitBuiltHook(tp -> {
                    // Not a synchronisation: the delivery timeout has to pass while the split is held.
                    long leftMs = deliveryTimeoutMs + 100 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentNs);
                    if (leftMs > 0) {
                        try {
                            Thread.sleep(leftMs);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                });
                List<CompletableFuture<RecordMetadata>> futures = send(producer, 10);
                producer.flush();
                assertThat(failures(futures)).allSatisfy(e -> {
                    assertThat(e)
                            .isExactlyInstanceOf(StellflowException.class)
                            .hasMessageContaining("batch expired after 1000 ms (delivery.timeout.ms)")
                            .hasMessageContaining("as a part of a batch split 1 time(s)")
                            .hasMessageContaining("this part was not sent yet")
                            .hasMessageNotContaining("MESSAGE_TOO_LARGE")
                            .hasNoCause();
                    assertThat(((StellflowException) e).errorCode())
                            .as("a local timeout, not the refused batch's code")
                            .isEqualTo(StellflowException.NETWORK_ERROR);
                });
            }
            assertThat(broker.events).as("only the refused batch went out").containsExactly("produce t-0");
        }
    }

    /** Sanity for the helpers above: an unrefused transaction commits through the fake coordinator. */
    @Test
    void theFakeCoordinatorCommitsATransactionThatNeedsNoSplit() throws Exception {
        try (FakeBroker broker = transactionalBroker()) {
            broker.maxBatchRecords = Integer.MAX_VALUE;
            try (StellflowProducer producer = new StellflowProducer(props(broker, "transactional.id", "no-split"))) {
                producer.initTransactions();
                producer.beginTransaction();
                List<CompletableFuture<RecordMetadata>> futures = send(producer, 10);
                producer.commitTransaction();
                for (int i = 0; i < futures.size(); i++) {
                    assertThat(futures.get(i).get(WAIT_S, TimeUnit.SECONDS).offset())
                            .isEqualTo(i);
                }
            }
            assertThat(broker.events).containsExactly("produce t-0", "end commit");
        }
    }
}
