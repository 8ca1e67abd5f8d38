package io.stellflow.broker.append;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.TimestampOffset;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Back-pressure, ordering and the life of the append queues, with the agent started late to fill
 * them: {@link AppendService#submit}'s codes, and a queue's removal with its leadership.
 */
class AppendServiceTest {
    @TempDir
    Path dir;

    UnifiedLog log;
    Partition partition;
    EmbeddedChannel channel;
    ReadGate gate;
    AppendService service;

    @BeforeEach
    void open() throws Exception {
        log = UnifiedLog.open(dir.resolve("t-0"), LogConfig.defaults());
        partition = new Partition("t", 0, 0, log); // leads on a single node
        channel = new EmbeddedChannel();
        gate = new ReadGate(channel);
    }

    @AfterEach
    void close() throws Exception {
        if (service != null) {
            service.close();
        }
        releaseOutbound();
        channel.finishAndReleaseAll();
        log.close();
    }

    private static ByteBuf batch(int records) {
        ByteBuf out = Unpooled.directBuffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1_700_000_000_000L);
        for (int i = 0; i < records; i++) {
            builder.append(1_700_000_000_000L, null, new byte[100]);
        }
        builder.close();
        return out;
    }

    private PendingProduce pending(int correlationId) {
        RequestContext context =
                new RequestContext(channel, RequestHeader.of(ApiKeys.PRODUCE, (short) 0, correlationId, "t"));
        return new PendingProduce(context, new String[] {"t"}, new int[] {0});
    }

    /** Base offsets of the Produce responses written so far, in correlationId order of arrival. */
    private List<Long> responses() {
        channel.runPendingTasks();
        List<Long> bases = new ArrayList<>();
        ByteBuf frame;
        while ((frame = channel.readOutbound()) != null) {
            frame.skipBytes(4);
            ResponseHeader.read(frame);
            ProduceResponse.PartitionResponse p =
                    ProduceResponse.read(frame).responses().get(0).partitions().get(0);
            assertThat(p.errorCode()).isEqualTo(Errors.NONE);
            bases.add(p.baseOffset());
            frame.release();
        }
        return bases;
    }

    /**
     * Waits up to 10 s for {@code count} responses and returns their base offsets. The agent returns
     * a request's bytes to the budget just before it answers it, so an empty queue does not yet mean
     * every response was written.
     */
    private List<Long> awaitResponses(int count) throws InterruptedException {
        List<Long> bases = new ArrayList<>();
        await(() -> {
            bases.addAll(responses());
            return bases.size() >= count;
        });
        return bases;
    }

    private void releaseOutbound() {
        Object o;
        while ((o = channel.readOutbound()) != null) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        Wait.until(Duration.ofSeconds(10), condition, "the condition");
    }

    @Test
    void queuedBytesAboveTheLimitPauseReadsUntilTheAgentCatchesUp() throws Exception {
        service = new AppendService(1, "park", 1024, 1000, 1 << 20);
        for (int i = 0; i < 3; i++) {
            assertThat(service.submit(partition, pending(i), 0, batch(5), false, gate))
                    .isEqualTo(AppendService.QUEUED);
        }
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead())
                .as("paused while 3 batches wait")
                .isFalse();
        assertThat(service.queuedBytes()).isGreaterThan(1000);
        service.start();
        await(() -> service.queuedBytes() == 0);
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead()).as("resumed").isTrue();
        assertThat(awaitResponses(3)).containsExactly(0L, 5L, 10L);
        assertThat(partition.logEndOffset()).isEqualTo(15);
    }

    @Test
    void aFullQueueIsBackPressuredWithoutWaitingAndPausesReadsUntilTheAgentMadeRoom() throws Exception {
        service = new AppendService(1, "backoff", 2, Long.MAX_VALUE, 1 << 20);
        assertThat(service.submit(partition, pending(0), 0, batch(1), false, gate))
                .isEqualTo(AppendService.QUEUED);
        assertThat(service.submit(partition, pending(1), 0, batch(1), false, gate))
                .isEqualTo(AppendService.QUEUED);
        ByteBuf third = batch(1);
        assertThat(service.submit(partition, pending(2), 0, third, false, gate))
                .as("returns at once")
                .isEqualTo(AppendService.BACK_PRESSURED);
        assertThat(third.refCnt()).as("still the caller's").isEqualTo(1);
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead()).as("paused on a full queue").isFalse();
        service.start();
        await(() -> service.queuedBytes() == 0);
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead())
                .as("resumed once the agent made room")
                .isTrue();
        assertThat(service.submit(partition, pending(2), 0, third, false, gate)).isEqualTo(AppendService.QUEUED);
        assertThat(awaitResponses(3)).containsExactly(0L, 1L, 2L);
        await(() -> third.refCnt() == 0);
    }

    @Test
    void aConnectionPausedBehindAQueueOfMarkersOnlyIsResumedOnceTheAgentAppendedThem() throws Exception {
        service = new AppendService(1, "backoff", 2, Long.MAX_VALUE, 1 << 20);
        for (int i = 0; i < 2; i++) {
            assertThat(service.submitMarker(partition, pending(i), 0, new TxnMarker(7, (short) 0, i == 0, 0, i)))
                    .isEqualTo(AppendService.QUEUED);
        }
        ByteBuf third = batch(1);
        assertThat(service.submit(partition, pending(2), 0, third, false, gate))
                .isEqualTo(AppendService.BACK_PRESSURED);
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead())
                .as("paused on a queue full of markers")
                .isFalse();
        // The caller's retry ended another way (the partition moved, the agent refused): nothing of
        // this connection's is queued, so only the markers' appends can resume it.
        third.release();
        service.start();
        assertThat(awaitResponses(2)).containsExactly(0L, 1L);
        await(() -> {
            channel.runPendingTasks();
            return channel.config().isAutoRead();
        });
        assertThat(partition.logEndOffset()).isEqualTo(2);
    }

    @Test
    void aPartitionThatDoesNotLeadGetsNoQueueAndAClosedServiceQueuesNothing() throws Exception {
        service = new AppendService(2, "park", 16, Long.MAX_VALUE, 1 << 20);
        service.start();
        partition.becomeFollower(2, 1);
        ByteBuf records = batch(1);
        assertThat(service.submit(partition, pending(0), 0, records, false, gate))
                .isEqualTo(AppendService.NOT_LEADER);
        assertThat(service.appenderCount()).isZero();
        partition.becomeLeader(2);
        assertThat(service.submit(partition, pending(0), 0, records, false, gate))
                .isEqualTo(AppendService.QUEUED);
        assertThat(awaitResponses(1)).containsExactly(0L);
        service.close();
        ByteBuf late = batch(1);
        assertThat(service.submit(partition, pending(1), 0, late, false, gate)).isEqualTo(AppendService.CLOSED);
        assertThat(late.refCnt()).as("still the caller's").isEqualTo(1);
        late.release();
        assertThat(service.appenderCount()).isZero();
        assertThat(service.polledQueueCount()).isZero();
    }

    @Test
    void aRemovedQueueAnswersWhatItHeldNotLeaderAndIsPolledNoMore() throws Exception {
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20);
        ByteBuf first = batch(2);
        ByteBuf second = batch(3);
        service.submit(partition, pending(0), 0, first, false, gate);
        service.submit(partition, pending(1), 0, second, false, gate);
        assertThat(service.appenderCount()).isEqualTo(1);
        partition.becomeFollower(2, 1); // then its queue goes, as the replica manager does it
        service.remove(partition);
        assertThat(service.appenderCount()).isZero();
        service.start();
        assertThat(awaitErrors(2)).containsOnly(Errors.NOT_LEADER_OR_FOLLOWER);
        await(() -> service.polledQueueCount() == 0);
        assertThat(first.refCnt()).isZero();
        assertThat(second.refCnt()).isZero();
        assertThat(service.queuedBytes()).isZero();
        assertThat(partition.logEndOffset()).as("nothing appended").isZero();
    }

    /**
     * Submitters racing with the partition's queue being removed and created again (leadership lost
     * and regained): every request is answered exactly once and its buffer released exactly once,
     * whether it was appended, refused at the door, or caught in a removed queue.
     */
    @Test
    void submitsRacingWithRemovalAreEachAnsweredOnceAndReleasedOnce() throws Exception {
        service = new AppendService(2, "backoff", 8, Long.MAX_VALUE, 1 << 20);
        service.start();
        int threads = 3;
        int perThread = 400;
        List<EmbeddedChannel> answers = new CopyOnWriteArrayList<>();
        List<ByteBuf> buffers = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> submitters = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            submitters.add(Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < perThread; i++) {
                        EmbeddedChannel c = new EmbeddedChannel();
                        answers.add(c);
                        RequestContext context =
                                new RequestContext(c, RequestHeader.of(ApiKeys.PRODUCE, (short) 0, i, "t"));
                        PendingProduce p = new PendingProduce(context, new String[] {"t"}, new int[] {0});
                        ByteBuf records = batch(1);
                        buffers.add(records);
                        int code;
                        while ((code = service.submit(partition, p, 0, records, false, null))
                                == AppendService.BACK_PRESSURED) {
                            LockSupport.parkNanos(AppendService.BACK_PRESSURE_PARK_NS);
                        }
                        if (code != AppendService.QUEUED) {
                            records.release();
                            p.complete(0, new PartitionResponse(0, Errors.NOT_LEADER_OR_FOLLOWER, -1L, 0, -1L, 0L));
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (int epoch = 1; submitters.stream().anyMatch(Thread::isAlive); epoch += 2) {
            partition.becomeFollower(2, epoch);
            service.remove(partition);
            Thread.sleep(1);
            partition.becomeLeader(epoch + 1);
            Thread.sleep(1);
        }
        for (Thread t : submitters) {
            t.join();
        }
        assertThat(failure.get()).isNull();
        await(() -> service.queuedBytes() == 0);
        for (EmbeddedChannel c : answers) {
            await(() -> {
                c.runPendingTasks();
                return c.outboundMessages().size() == 1;
            });
        }
        // Requests appended in one pass are answered before the pass lets go of their merged view
        // (PartitionAppender.append: a composite of retained duplicates, released in its finally): a buffer reaches 0
        // just after its answer.
        for (ByteBuf b : buffers) {
            await(() -> b.refCnt() == 0);
            assertThat(b.refCnt()).isZero();
        }
        for (EmbeddedChannel c : answers) {
            c.finishAndReleaseAll();
        }
        partition.becomeFollower(2, Integer.MAX_VALUE);
        service.remove(partition);
        await(() -> service.polledQueueCount() == 0);
        assertThat(service.appenderCount()).isZero();
    }

    /** Error codes of the next {@code count} responses (waits up to 10 s). */
    private List<Short> awaitErrors(int count) throws InterruptedException {
        List<Short> errors = new ArrayList<>();
        await(() -> {
            channel.runPendingTasks();
            ByteBuf frame;
            while ((frame = channel.readOutbound()) != null) {
                frame.skipBytes(4);
                ResponseHeader.read(frame);
                errors.add(ProduceResponse.read(frame)
                        .responses()
                        .get(0)
                        .partitions()
                        .get(0)
                        .errorCode());
                frame.release();
            }
            return errors.size() >= count;
        });
        return errors;
    }

    /**
     * A pass takes at most {@link PartitionAppender#MAX_GATHER_BYTES} from the queue: small requests
     * share one write, large ones go one per write (so a producer's pipelined 1 MiB requests are not
     * held back and answered together).
     */
    @Test
    void smallRequestsShareAWriteAndLargeOnesAreWrittenOneByOne() throws Exception {
        AtomicInteger writes = new AtomicInteger();
        partition.addListener(writes::incrementAndGet);
        service = new AppendService(1, "park", 64, Long.MAX_VALUE, 8 << 20);
        for (int i = 0; i < 10; i++) {
            service.submit(partition, pending(i), 0, batch(2), false, gate);
        }
        service.start();
        assertThat(awaitResponses(10)).hasSize(10);
        assertThat(writes.get()).as("10 small requests, one write").isEqualTo(1);

        service.close();
        service = new AppendService(1, "park", 64, Long.MAX_VALUE, 8 << 20);
        int records = PartitionAppender.MAX_GATHER_BYTES / 2 / 100; // a bit over half the cap each
        for (int i = 0; i < 3; i++) {
            ByteBuf large = batch(records);
            assertThat(large.readableBytes()).isGreaterThan(PartitionAppender.MAX_GATHER_BYTES / 2);
            service.submit(partition, pending(10 + i), 0, large, false, gate);
        }
        service.start();
        assertThat(awaitResponses(3)).containsExactly(20L, 20L + records, 20L + 2L * records);
        assertThat(writes.get())
                .as("then 3 requests over half the cap, a write each")
                .isEqualTo(4);

        service.close();
        service = new AppendService(1, "park", 64, Long.MAX_VALUE, 8 << 20);
        long next = 20L + 3L * records;
        int over = PartitionAppender.MAX_GATHER_BYTES / 100 + 100; // one request above the cap
        ByteBuf huge = batch(over);
        assertThat(huge.readableBytes()).isGreaterThan(PartitionAppender.MAX_GATHER_BYTES);
        service.submit(partition, pending(13), 0, huge, false, gate);
        service.submit(partition, pending(14), 0, batch(2), false, gate);
        service.start();
        assertThat(awaitResponses(2)).containsExactly(next, next + over);
        assertThat(writes.get())
                .as("a request above the cap alone, then the small one")
                .isEqualTo(6);
    }

    @Test
    void aCorruptBatchIsAnsweredAloneAndTheOthersAreAppendedInOneWrite() throws Exception {
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20);
        ByteBuf bad = batch(2);
        bad.setByte(bad.writerIndex() - 1, bad.getByte(bad.writerIndex() - 1) ^ 1); // CRC mismatch
        service.submit(partition, pending(0), 0, batch(2), false, gate);
        service.submit(partition, pending(1), 0, bad, false, gate);
        service.submit(partition, pending(2), 0, batch(3), false, gate);
        service.start();
        await(() -> service.queuedBytes() == 0);
        channel.runPendingTasks();
        // The corrupt request is answered as soon as it is validated, before the others' append.
        java.util.Map<Integer, ProduceResponse.PartitionResponse> byCorrelation = new java.util.TreeMap<>();
        ByteBuf frame;
        while ((frame = channel.readOutbound()) != null) {
            frame.skipBytes(4);
            int correlationId = ResponseHeader.read(frame).correlationId();
            byCorrelation.put(
                    correlationId,
                    ProduceResponse.read(frame).responses().get(0).partitions().get(0));
            frame.release();
        }
        assertThat(byCorrelation.values())
                .extracting(ProduceResponse.PartitionResponse::errorCode)
                .containsExactly(Errors.NONE, Errors.CORRUPT_MESSAGE, Errors.NONE);
        assertThat(byCorrelation.values())
                .extracting(ProduceResponse.PartitionResponse::baseOffset)
                .containsExactly(0L, -1L, 2L);
        assertThat(partition.logEndOffset()).isEqualTo(5);
    }

    /**
     * The topic's {@code max.message.bytes} replaces the broker's {@code message.max.bytes} for its
     * partition, in both directions: a batch above it is refused alone in a gathered pass (the
     * others appended), one at it is taken; above the broker's limit it lets larger batches in;
     * cleared, the broker's limit applies again.
     */
    @Test
    void theTopicsMaxMessageBytesBindsItsPartitionInsteadOfTheBrokersLimit() throws Exception {
        ByteBuf sized = batch(2);
        int twoRecords = sized.readableBytes();
        sized.release();
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20);
        partition.topicMaxMessageBytes(twoRecords);
        service.submit(partition, pending(0), 0, batch(2), false, gate);
        service.submit(partition, pending(1), 0, batch(5), false, gate);
        service.submit(partition, pending(2), 0, batch(1), false, gate);
        service.start();
        assertThat(awaitErrors(3)).containsExactlyInAnyOrder(Errors.NONE, Errors.MESSAGE_TOO_LARGE, Errors.NONE);
        assertThat(partition.logEndOffset()).isEqualTo(3);

        partition.topicMaxMessageBytes(Partition.NO_TOPIC_MAX_MESSAGE_BYTES);
        service.submit(partition, pending(3), 0, batch(5), false, gate);
        assertThat(awaitErrors(1)).containsExactly(Errors.NONE);
        assertThat(partition.logEndOffset()).isEqualTo(8);
        service.close();

        // The broker's limit below one record's batch; the topic's above it.
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, twoRecords / 2);
        service.start();
        service.submit(partition, pending(4), 0, batch(2), false, gate);
        assertThat(awaitErrors(1)).containsExactly(Errors.MESSAGE_TOO_LARGE);
        partition.topicMaxMessageBytes(1 << 20);
        service.submit(partition, pending(5), 0, batch(2), false, gate);
        assertThat(awaitErrors(1)).containsExactly(Errors.NONE);
        assertThat(partition.logEndOffset()).isEqualTo(10);
    }

    /** Appends a batch as the SDKs build it: records at base + deltas, header maxTimestamp = base. */
    private static void sdkBatch(ByteBuf out, long baseMs, long... deltasMs) {
        int start = out.writerIndex();
        RecordBatchBuilder b = new RecordBatchBuilder(out, baseMs);
        for (long d : deltasMs) {
            b.append(baseMs + d, null, new byte[10]);
        }
        b.close();
        out.setLong(start + RecordBatchLayout.MAX_TIMESTAMP_OFFSET, baseMs);
        out.setInt(start + RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, start));
    }

    /**
     * Decision 9.s through one gathered pass: the real max timestamps the validation computes stay
     * aligned with the batches appended when requests between them are refused, by the validation
     * after a valid first batch (CRC of the second), and when an idempotent request between them is
     * appended alone (its own max timestamp, the gathered ones before and after it theirs).
     */
    @Test
    void refusedRequestsInAPassLeaveTheOthersIndexedByTheirRecordsRealMaxTimestamp() throws Exception {
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20);
        ByteBuf first = Unpooled.directBuffer();
        sdkBatch(first, 1_000_000, 0, 5_000); // offsets 0-1
        sdkBatch(first, 1_010_000, 0, 100); // offsets 2-3
        ByteBuf corruptSecond = Unpooled.directBuffer();
        sdkBatch(corruptSecond, 1_020_000, 0, 1);
        int second = corruptSecond.writerIndex();
        sdkBatch(corruptSecond, 1_030_000, 0, 1);
        corruptSecond.setByte(second + RecordBatchLayout.RECORDS_OFFSET + 20, 7); // CRC mismatch
        ByteBuf idempotent = Unpooled.directBuffer();
        sdkBatch(idempotent, 1_040_000, 0, 1);
        idempotent.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, 5);
        idempotent.setShort(RecordBatchLayout.PRODUCER_EPOCH_OFFSET, 0);
        idempotent.setInt(RecordBatchLayout.BASE_SEQUENCE_OFFSET, 0);
        idempotent.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(idempotent, 0));
        ByteBuf last = Unpooled.directBuffer();
        sdkBatch(last, 1_050_000, 0, 3_000, 4_000); // offsets 4-6
        service.submit(partition, pending(0), 0, first, false, gate);
        service.submit(partition, pending(1), 0, corruptSecond, false, gate);
        service.submit(partition, pending(2), 0, idempotent, false, gate);
        service.submit(partition, pending(3), 0, last, false, gate);
        service.start();
        // The idempotent batch is appended alone, between the gathered ones before and after it.
        assertThat(awaitErrors(4))
                .containsExactlyInAnyOrder(Errors.CORRUPT_MESSAGE, Errors.NONE, Errors.NONE, Errors.NONE);
        assertThat(log.logEndOffset()).isEqualTo(9); // 0-3, the idempotent 4-5, the last 6-8
        assertThat(log.offsetForTimestamp(1_004_000, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(1_005_000, 1));
        assertThat(log.offsetForTimestamp(1_040_001, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(1_040_001, 5));
        assertThat(log.offsetForTimestamp(1_052_500, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(1_053_000, 7));
        assertThat(log.offsetForTimestamp(1_054_001, Long.MAX_VALUE)).isNull();
        assertThat(log.offsetOfMaxTimestamp(Long.MAX_VALUE)).isEqualTo(new TimestampOffset(1_054_000, 8));
    }

    @Test
    void requestsQueuedWhileLeadingButAppendedAfterBecomingFollowerWriteNothing() throws Exception {
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20);
        service.submit(partition, pending(0), 0, batch(2), false, gate);
        service.submit(partition, pending(1), 0, batch(3), false, gate);
        // Metadata says another broker leads now (a paused broker resuming, a slow agent): the
        // queued requests must not reach this log, which the new leader's fetcher now owns.
        partition.becomeFollower(2, 1);
        service.start();
        assertThat(awaitErrors(2)).containsOnly(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(partition.logEndOffset()).isZero();
        assertThat(partition.log().latestLeaderEpoch()).as("no epoch recorded").isNegative();
    }
}
