package io.stellflow.broker.append;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Back-pressure and ordering of the append agents, with the agent started late to fill queues. */
class AppendServiceTest {
    @TempDir
    Path dir;

    LocalPartitions registry;
    Partition partition;
    EmbeddedChannel channel;
    ReadGate gate;
    AppendService service;

    @BeforeEach
    void open() throws Exception {
        registry = LocalPartitions.open(dir, LogConfig.defaults());
        registry.create("t", 1);
        partition = registry.partition("t", 0);
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
        registry.close();
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
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition within 10 s").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void queuedBytesAboveTheLimitPauseReadsUntilTheAgentCatchesUp() throws Exception {
        service = new AppendService(1, "park", 1024, 1000, 1 << 20);
        for (int i = 0; i < 3; i++) {
            service.submit(partition, pending(i), 0, batch(5), false, gate);
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
    void aFullQueuePausesReadsAndHoldsTheSubmitterUntilThereIsRoom() throws Exception {
        service = new AppendService(1, "backoff", 2, Long.MAX_VALUE, 1 << 20);
        service.submit(partition, pending(0), 0, batch(1), false, gate);
        service.submit(partition, pending(1), 0, batch(1), false, gate);
        CountDownLatch submitted = new CountDownLatch(1);
        Thread third = new Thread(() -> {
            service.submit(partition, pending(2), 0, batch(1), false, gate);
            submitted.countDown();
        });
        third.start();
        assertThat(submitted.await(200, TimeUnit.MILLISECONDS))
                .as("held while full")
                .isFalse();
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead()).as("paused on a full queue").isFalse();
        service.start();
        assertThat(submitted.await(10, TimeUnit.SECONDS)).isTrue();
        await(() -> service.queuedBytes() == 0);
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead()).isTrue();
        assertThat(awaitResponses(3)).containsExactly(0L, 1L, 2L);
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

    @Test
    void requestsQueuedWhileLeadingButAppendedAfterBecomingFollowerWriteNothing() throws Exception {
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20);
        service.submit(partition, pending(0), 0, batch(2), false, gate);
        service.submit(partition, pending(1), 0, batch(3), false, gate);
        // Metadata says another broker leads now (a paused broker resuming, a slow agent): the
        // queued requests must not reach this log, which the new leader's fetcher now owns.
        partition.becomeFollower(2, 1);
        service.start();
        await(() -> service.queuedBytes() == 0);
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
            return errors.size() == 2;
        });
        assertThat(errors).containsOnly(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(partition.logEndOffset()).isZero();
        assertThat(partition.log().latestLeaderEpoch()).as("no epoch recorded").isNegative();
    }
}
