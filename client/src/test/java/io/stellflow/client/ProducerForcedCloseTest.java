package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code close(timeout)} whose timeout passes with records outstanding (and {@code close(Duration.ZERO)}
 * always) closes forcefully, as Kafka's producer: the sender stops, every batch not acknowledged yet
 * (queued, in flight, being compressed) fails once with "producer is closed forcefully", the sender
 * and compressor threads end and every batch buffer goes back to its pool once. Without it the
 * sender went on retrying after the connections closed until {@code delivery.timeout.ms} (120 s).
 */
class ProducerForcedCloseTest {
    private static final TopicPartition P0 = new TopicPartition("t", 0);
    /** Leaderless ({@link FakeBroker#leaderless}): a record sent to it stays queued. */
    private static final TopicPartition P1 = new TopicPartition("t", 1);

    private static final long WAIT_S = 10;
    /** How long a forced close and its failures may take (they take a few ms). */
    private static final long PROMPT_MS = 2_000;

    private static final String FORCED = "producer is closed forcefully";

    @RegisterExtension
    final LogLines closeLog = LogLines.of(StellflowProducer.class).atLevel(Level.WARN);

    private static Properties props(FakeBroker broker, String clientId, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        p.setProperty("client.id", clientId);
        p.setProperty("linger.ms", "0");
        p.setProperty("batch.size", "200"); // one 60-byte record per batch: several batches
        p.setProperty("max.in.flight.requests.per.connection", "1"); // one in flight, the rest queued
        p.setProperty("retry.backoff.ms", "20");
        p.setProperty("max.block.ms", "10000");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    /** A record's outcome and how often its callback ran. */
    private record Outcome(CompletableFuture<Exception> done, AtomicInteger calls) {
        Exception error() throws Exception {
            return done.get(WAIT_S, TimeUnit.SECONDS);
        }
    }

    private static List<Outcome> send(StellflowProducer producer, TopicPartition tp, int records) {
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < records; i++) {
            Outcome o = new Outcome(new CompletableFuture<>(), new AtomicInteger());
            producer.send(new ProducerRecord(tp.topic(), tp.partition(), null, new byte[60]), (md, e) -> {
                o.calls().incrementAndGet();
                o.done().complete(e);
            });
            outcomes.add(o);
        }
        return outcomes;
    }

    /** Every outcome failed with the forced close's error, each callback called once. */
    private static void assertFailedForcefullyOnce(List<Outcome> outcomes) throws Exception {
        for (Outcome o : outcomes) {
            assertThat(o.error()).isInstanceOf(ProducerClosedException.class).hasMessageContaining(FORCED);
            assertThat(((StellflowException) o.error()).retriable())
                    .as("a closed producer sends nothing more: not retriable (Kafka's forced close)")
                    .isFalse();
        }
        assertThat(outcomes)
                .allSatisfy(o ->
                        assertThat(o.calls().get()).as("callbacks per record").isEqualTo(1));
    }

    /** Runs {@code call} on a thread of its own (flush and close block). */
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

    /** Whether a live thread has this name (the producer names its threads after {@code client.id}). */
    private static boolean threadAlive(String name) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name) && t.isAlive()) {
                return true;
            }
        }
        return false;
    }

    /** Waits up to {@link #PROMPT_MS} for the producer's sender (and compressor) thread to end. */
    private static void assertThreadsEnd(String clientId) throws InterruptedException {
        long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROMPT_MS);
        while (System.nanoTime() < deadlineNs
                && (threadAlive("stellflow-producer-sender-" + clientId)
                        || threadAlive("stellflow-producer-compressor-" + clientId))) {
            Thread.sleep(10);
        }
        assertThat(threadAlive("stellflow-producer-sender-" + clientId))
                .as("sender thread alive")
                .isFalse();
        assertThat(threadAlive("stellflow-producer-compressor-" + clientId))
                .as("compressor thread alive")
                .isFalse();
    }

    private static long elapsedMs(long startNs) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
    }

    @Test
    @Timeout(60)
    void closeWithZeroTimeoutFailsEveryBatchInFlightAndQueuedBeforeItReturns() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            broker.leaderless = Set.of(P1);
            broker.holdProduceResponses();
            StellflowProducer producer = new StellflowProducer(props(broker, "forced-zero"));
            List<Outcome> outcomes = new ArrayList<>(send(producer, P0, 10));
            outcomes.addAll(send(producer, P1, 3));
            assertThat(broker.heldProduceResponses.tryAcquire(WAIT_S, TimeUnit.SECONDS))
                    .as("a Produce in flight")
                    .isTrue();

            long startNs = System.nanoTime();
            producer.close(Duration.ZERO);
            assertThat(elapsedMs(startNs)).isLessThan(PROMPT_MS);
            assertThat(outcomes)
                    .as("every record completed when close returned")
                    .allSatisfy(o -> assertThat(o.done()).isDone());
            assertFailedForcefullyOnce(outcomes);
            assertThat(outcomes.get(0).error()).hasMessageContaining("in flight");
            assertThat(outcomes.get(12).error()).hasMessageContaining("never sent");
            assertThreadsEnd("forced-zero");

            broker.releaseProduceResponses(); // the answer to the request in flight comes too late
            Thread.sleep(200);
            assertThat(outcomes)
                    .allSatisfy(o -> assertThat(o.calls().get())
                            .as("callbacks per record")
                            .isEqualTo(1));
            assertThat(producer.batchBuffers().outstandingBuffers())
                    .as("every batch buffer given back once")
                    .isZero();
        }
    }

    /**
     * A broker that holds every Produce answer, or one that went down after the metadata: the close
     * waits its 200 ms, then fails the rest at once instead of retrying for {@code delivery.timeout.ms}.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"never answers", "is down"})
    @Timeout(60)
    void closeWithATimeoutThatPassesReturnsAfterItAndFailsTheRest(String broken) throws Exception {
        FakeBroker broker = new FakeBroker();
        boolean brokerClosed = false;
        try {
            broker.createTopic("t", 2);
            broker.leaderless = Set.of(P1);
            StellflowProducer producer = new StellflowProducer(props(broker, "forced-200"));
            assertThat(producer.partitionsFor("t")).hasSize(2);
            if (broken.equals("is down")) {
                broker.close();
                brokerClosed = true;
            } else {
                broker.holdProduceResponses();
            }
            List<Outcome> outcomes = new ArrayList<>(send(producer, P0, 10));
            outcomes.addAll(send(producer, P1, 3));
            if (broken.equals("never answers")) {
                assertThat(broker.heldProduceResponses.tryAcquire(WAIT_S, TimeUnit.SECONDS))
                        .isTrue();
            }

            long startNs = System.nanoTime();
            producer.close(Duration.ofMillis(200));
            assertThat(elapsedMs(startNs)).isBetween(200L, PROMPT_MS);
            assertThat(outcomes).allSatisfy(o -> assertThat(o.done()).isDone());
            assertFailedForcefullyOnce(outcomes);
            assertThreadsEnd("forced-200");
            assertThat(producer.batchBuffers().outstandingBuffers()).isZero();
        } finally {
            if (!brokerClosed) {
                broker.releaseProduceResponses(); // to the closed connection: frees them
                broker.close();
            }
        }
    }

    /**
     * The compressor thread is in its codec when the close forces: that batch's buffer is still in
     * use, so it fails once the codec returns, on that thread, and its buffers go back once.
     */
    @Test
    @Timeout(60)
    void aBatchBeingCompressedAtAForcedCloseFailsOnceWhenItsCodecReturns() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            broker.holdProduceResponses();
            ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.LZ4, 1, 0);
            ProducerConfig config = ProducerConfig.from(props(
                    broker,
                    "forced-compressing",
                    "compression.type",
                    "lz4",
                    "linger.ms",
                    "60000",
                    "batch.size",
                    "16384"));
            ProducerCompression compression = ProducerCompression.of(config, script.codecs());
            StellflowProducer producer = new StellflowProducer(config, null, compression);
            List<Outcome> outcomes = send(producer, P0, 3); // one batch, sealed by the flush
            CompletableFuture<Void> flushed = async(producer::flush);
            assertThat(script.atGate.await(WAIT_S, TimeUnit.SECONDS))
                    .as("the batch in the codec")
                    .isTrue();

            long startNs = System.nanoTime();
            producer.close(Duration.ZERO);
            assertThat(elapsedMs(startNs)).isLessThan(PROMPT_MS);
            assertThat(outcomes)
                    .as("not failed while its codec still writes it")
                    .allSatisfy(o -> assertThat(o.done()).isNotDone());

            script.open();
            assertFailedForcefullyOnce(outcomes);
            flushed.get(WAIT_S, TimeUnit.SECONDS);
            assertThreadsEnd("forced-compressing");
            assertThat(script.calls.get()).as("compressed once").isEqualTo(1);
            assertThat(broker.produceRequests.get()).as("never sent").isZero();
            assertBuffersGivenBackOnce(compression);
            assertThat(script.closed.get()).as("the producer's codecs freed").isEqualTo(script.made.get());
        }
    }

    /**
     * A thread in {@code flush} that helps compress, and the compressor thread, each hold a batch in
     * the codec while a third sealed batch waits for one; the close forces, and they finish their
     * batches in the window where the sender has freed the codecs and not yet failed the rest ({@link
     * ProducerSender#forcedCloseHook}). Neither may take the waiting batch: compressed now it would
     * fail with the closed codecs' error (UNKNOWN_SERVER_ERROR, "compressing ... failed") instead of
     * the forced close's. Every batch fails once with "producer is closed forcefully", none is
     * compressed after the close, and every buffer goes back once.
     */
    @Test
    @Timeout(60)
    void noThreadCompressesABatchWaitingForACodecAfterAForcedClose() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 3);
            ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.LZ4, 1, 2, 0);
            ProducerConfig config = ProducerConfig.from(props(
                    broker, "forced-waiting", "compression.type", "lz4", "linger.ms", "60000", "batch.size", "16384"));
            ProducerCompression compression = ProducerCompression.of(config, script.codecs());
            StellflowProducer producer = new StellflowProducer(config, null, compression);
            ProducerCompressionQueue queue =
                    (ProducerCompressionQueue) producer.sender().compressor();
            List<Outcome> outcomes = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
                outcomes.addAll(send(producer, new TopicPartition("t", p), 1)); // three open batches
            }
            CompletableFuture<Void> flushed = async(producer::flush); // seals them and helps
            Wait.until(
                    Duration.ofSeconds(WAIT_S),
                    () -> script.calls.get() == 2,
                    "two batches in the codec (the flush's thread and the compressor thread)");
            assertThat(queue.hasWaiting()).as("the third waits for a codec").isTrue();
            producer.sender().forcedCloseHook(() -> {
                script.open(); // both finish now, the codecs freed, the waiting batch not yet failed
                Wait.until(
                        Duration.ofSeconds(WAIT_S),
                        () -> !queue.hasWaiting(),
                        "the waiting batch taken (by a compressing thread, or off the queue at the close)");
            });

            producer.close(Duration.ZERO);
            assertFailedForcefullyOnce(outcomes);
            flushed.get(WAIT_S, TimeUnit.SECONDS);
            assertThreadsEnd("forced-waiting");
            assertThat(script.calls.get())
                    .as("nothing compressed after the close")
                    .isEqualTo(2);
            assertThat(broker.produceRequests.get()).as("never sent").isZero();
            assertBuffersGivenBackOnce(compression);
        }
    }

    /** Both of the producer's buffer pools have every buffer back, each given back once. */
    private static void assertBuffersGivenBackOnce(ProducerCompression compression) {
        assertThat(compression.plainBuffers().outstandingBuffers())
                .as("uncompressed buffers given back once")
                .isZero();
        assertThat(compression.compressedBuffers().outstandingBuffers())
                .as("compressed buffers given back once")
                .isZero();
    }

    /** A negative close timeout is a caller's bug, refused as Kafka's producer does; the producer stays usable. */
    @Test
    @Timeout(60)
    void aNegativeCloseTimeoutIsRefused() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "negative"))) {
                assertThatThrownBy(() -> producer.close(Duration.ofMillis(-1)))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("must not be negative");
                assertThat(producer.send(new ProducerRecord("t", 0, null, new byte[10]))
                                .get(WAIT_S, TimeUnit.SECONDS)
                                .offset())
                        .isZero();
            }
        }
    }

    /** With time enough the close stays graceful: everything is delivered, nothing fails. */
    @Test
    @Timeout(60)
    void closeWithTimeEnoughDeliversEveryRecord() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.holdProduceResponses();
            StellflowProducer producer = new StellflowProducer(props(broker, "graceful"));
            List<Outcome> outcomes = send(producer, P0, 10);
            assertThat(broker.heldProduceResponses.tryAcquire(WAIT_S, TimeUnit.SECONDS))
                    .isTrue();
            CompletableFuture<Void> released = async(() -> {
                Thread.sleep(300);
                broker.releaseProduceResponses();
            });
            producer.close(Duration.ofSeconds(WAIT_S));
            released.get(WAIT_S, TimeUnit.SECONDS);
            for (Outcome o : outcomes) {
                assertThat(o.error()).as("delivered").isNull();
            }
            assertThat(broker.log(P0).stream()
                            .mapToInt(FakeBroker.StoredBatch::recordCount)
                            .sum())
                    .isEqualTo(10);
            assertThreadsEnd("graceful");
            assertThat(producer.batchBuffers().outstandingBuffers()).isZero();
        }
    }

    /** A flush blocked in another thread returns when the close forces (as Kafka's: it does not throw). */
    @Test
    @Timeout(60)
    void aFlushBlockedInAnotherThreadReturnsWhenTheCloseForces() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            broker.leaderless = Set.of(P1);
            broker.holdProduceResponses();
            StellflowProducer producer = new StellflowProducer(props(broker, "forced-flush", "linger.ms", "60000"));
            List<Outcome> outcomes = new ArrayList<>(send(producer, P0, 6));
            outcomes.addAll(send(producer, P1, 2));
            CompletableFuture<Void> flushed = async(producer::flush);
            assertThat(broker.heldProduceResponses.tryAcquire(WAIT_S, TimeUnit.SECONDS))
                    .isTrue();
            Thread.sleep(100);
            assertThat(flushed).isNotDone();

            producer.close(Duration.ZERO);
            flushed.get(PROMPT_MS, TimeUnit.MILLISECONDS);
            assertFailedForcefullyOnce(outcomes);
            assertThreadsEnd("forced-flush");
            broker.releaseProduceResponses(); // to the closed connection: frees them
        }
    }

    /**
     * A send waiting for {@code buffer.memory} when the close forces gets {@link IllegalStateException}
     * (as a send after close, and as Kafka's "closed while allocating memory"): the memory the forced
     * close frees must not open a batch that no sender is left to send or fail.
     */
    @Test
    @Timeout(60)
    void aSendWaitingForMemoryWhenTheCloseForcesIsRefused() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.holdProduceResponses();
            // Each batch reserves batch.size (200): 5 fill buffer.memory, the 6th record waits.
            StellflowProducer producer = new StellflowProducer(props(broker, "forced-memory", "buffer.memory", "1024"));
            List<Outcome> outcomes = send(producer, P0, 5);
            CompletableFuture<Void> waiting = async(() -> send(producer, P0, 1));
            Thread.sleep(200);
            assertThat(waiting).as("waiting for buffer.memory").isNotDone();

            producer.close(Duration.ZERO);
            assertThatThrownBy(() -> waiting.get(PROMPT_MS, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("producer is closed");
            assertFailedForcefullyOnce(outcomes);
            assertThreadsEnd("forced-memory");
            assertThat(producer.batchBuffers().outstandingBuffers()).isZero();
            broker.releaseProduceResponses(); // to the closed connection: frees them
        }
    }

    /**
     * A second close with timeout 0 while a first one waits (its timeout a minute) forces it, as a
     * second close of Kafka's producer does: both return promptly.
     */
    @Test
    @Timeout(60)
    void aSecondCloseWithZeroTimeoutForcesOneThatIsWaiting() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.holdProduceResponses();
            StellflowProducer producer = new StellflowProducer(props(broker, "forced-twice"));
            List<Outcome> outcomes = send(producer, P0, 6);
            assertThat(broker.heldProduceResponses.tryAcquire(WAIT_S, TimeUnit.SECONDS))
                    .isTrue();
            CompletableFuture<Void> first = async(() -> producer.close(Duration.ofMinutes(1)));
            Thread.sleep(200);
            assertThat(first).as("the first close waits").isNotDone();

            long startNs = System.nanoTime();
            producer.close(Duration.ZERO);
            assertThat(elapsedMs(startNs)).isLessThan(PROMPT_MS);
            first.get(PROMPT_MS, TimeUnit.MILLISECONDS);
            assertFailedForcefullyOnce(outcomes);
            assertThreadsEnd("forced-twice");
            producer.close(); // and a third, after the end, returns at once
            broker.releaseProduceResponses(); // to the closed connection: frees them
        }
    }

    /**
     * A callback that closes the producer (on the I/O or sender thread: timeout 0) forces the close: the
     * records still queued fail at once, without a deadlock, instead of waiting for their delivery
     * timeout.
     */
    @Test
    @Timeout(60)
    void closeFromASendCallbackFailsTheOtherOutstandingRecords() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            broker.leaderless = Set.of(P1);
            StellflowProducer producer = new StellflowProducer(props(broker, "forced-callback"));
            List<Outcome> queued = send(producer, P1, 3);
            CompletableFuture<Long> closeMs = new CompletableFuture<>();
            producer.send(new ProducerRecord("t", 0, null, new byte[1]), (md, e) -> {
                long startNs = System.nanoTime();
                producer.close();
                closeMs.complete(elapsedMs(startNs));
            });
            assertThat(closeMs.get(WAIT_S, TimeUnit.SECONDS)).isLessThan(PROMPT_MS);
            assertFailedForcefullyOnce(queued);
            assertThreadsEnd("forced-callback");
        }
    }

    /**
     * A codec fails a batch on an application thread (the flush's, helping while the compressor thread
     * is busy): that batch's callback runs there, and that batch is outstanding until it returns. A
     * {@code close} with a 30 s timeout from the callback cannot wait for it, so, as on the producer's
     * own threads (Kafka's close(0) from a callback), it forces at once with a WARN naming why; the
     * records still queued fail "closed forcefully", the one in the codec when its codec returns.
     */
    @Test
    @Timeout(60)
    void closeFromACallbackOnAThreadThatCompressedForcesInsteadOfWaitingForItself() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 3);
            broker.leaderless = Set.of(P1);
            TopicPartition p2 = new TopicPartition("t", 2);
            // Call 1 (the compressor thread's) waits at the gate; call 2 (the flush's thread's) throws.
            ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.LZ4, 1, 1, 2, 2);
            ProducerConfig config = ProducerConfig.from(props(
                    broker,
                    "forced-codec-callback",
                    "compression.type",
                    "lz4",
                    "linger.ms",
                    "60000",
                    "batch.size",
                    "16384"));
            StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()));
            Outcome inCodec = new Outcome(new CompletableFuture<>(), new AtomicInteger());
            producer.send(new ProducerRecord("t", 0, null, new byte[20_000]), (md, e) -> {
                inCodec.calls().incrementAndGet();
                inCodec.done().complete(e);
            }); // a full batch of its own: the compressor thread takes it
            assertThat(script.atGate.await(WAIT_S, TimeUnit.SECONDS))
                    .as("the compressor thread in its codec")
                    .isTrue();
            CompletableFuture<Long> closeMs = new CompletableFuture<>();
            CompletableFuture<String> callbackThread = new CompletableFuture<>();
            AtomicInteger failedCalls = new AtomicInteger();
            producer.send(new ProducerRecord("t", 2, null, new byte[60]), (md, e) -> {
                failedCalls.incrementAndGet();
                callbackThread.complete(Thread.currentThread().getName());
                long startNs = System.nanoTime();
                producer.close(Duration.ofSeconds(30));
                closeMs.complete(elapsedMs(startNs));
            });
            List<Outcome> queued = send(producer, P1, 2);
            CompletableFuture<Void> flushed = async(producer::flush); // seals t-2 and t-1, compresses t-2

            assertThat(closeMs.get(45, TimeUnit.SECONDS)) // above 30 s: a close that waits shows its time
                    .as("close from the callback returns at once, not after its 30 s")
                    .isLessThan(5_000);
            assertThat(callbackThread.get())
                    .as("the callback ran on the application thread that compressed")
                    .doesNotStartWith("stellflow-producer-");
            assertFailedForcefullyOnce(queued);
            assertThat(closeLog.messages())
                    .anySatisfy(m -> assertThat(m)
                            .contains("close() called from a send callback")
                            .contains("completes the producer's batches"));

            script.open();
            assertFailedForcefullyOnce(List.of(inCodec));
            flushed.get(WAIT_S, TimeUnit.SECONDS);
            assertThat(failedCalls.get())
                    .as("the codec failure's callback ran once")
                    .isEqualTo(1);
            assertThreadsEnd("forced-codec-callback");
            assertThat(producer.batchBuffers().outstandingBuffers()).isZero();
        }
    }

    /**
     * A commit blocked in its flush when the close forces throws (its records failed: the
     * transaction can only abort) and never sends EndTransaction(commit) for a transaction whose
     * records are lost; the open transaction is left to the coordinator's timeout.
     */
    @Test
    @Timeout(60)
    void aCommitBlockedInItsFlushWhenTheCloseForcesThrowsAndNeverCommits() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.transactionCoordinator = true;
            broker.createTopic("t", 1);
            StellflowProducer producer =
                    new StellflowProducer(props(broker, "forced-commit", "transactional.id", "forced-commit"));
            producer.initTransactions();
            producer.beginTransaction();
            broker.holdProduceResponses();
            List<Outcome> outcomes = send(producer, P0, 6);
            CompletableFuture<Void> committed = async(producer::commitTransaction);
            assertThat(broker.heldProduceResponses.tryAcquire(WAIT_S, TimeUnit.SECONDS))
                    .isTrue();
            Thread.sleep(100);
            assertThat(committed).isNotDone();

            producer.close(Duration.ZERO);
            assertThatThrownBy(() -> committed.get(PROMPT_MS, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(StellflowException.class)
                    .hasMessageContaining("call abortTransaction");
            assertFailedForcefullyOnce(outcomes);
            assertThat(broker.events).doesNotContain("end commit", "end abort");
            broker.releaseProduceResponses(); // to the closed connection: frees them
        }
    }
}
