package io.stellflow.broker.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.stellflow.broker.append.AppendService;
import io.stellflow.broker.append.PendingProduce;
import io.stellflow.broker.handler.ProduceHandler;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Produce hand-off on the event loop ({@link ConnectionHandler} with event-loop dispatch, {@link
 * EventLoopApiHandler}): a Produce to a known topic skips the request handler pool; one that may wait
 * (a topic to auto-create), any other API, and any request behind one still in the pool go through
 * the pool, so a connection's requests keep their order. The pool here runs tasks only when the test
 * says so.
 */
class EventLoopProduceTest {
    @TempDir
    Path dir;

    private LocalPartitions registry;
    private AppendService appends;
    private final ArrayDeque<Runnable> pool = new ArrayDeque<>();
    private final List<Short> otherApiCalls = new ArrayList<>();
    private EmbeddedChannel channel;
    private ProduceHandler produce;

    @BeforeEach
    void open() throws Exception {
        registry = LocalPartitions.open(dir, LogConfig.defaults(), 1);
        registry.create("t", 1);
        registry.create("u", 2);
        appends = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20);
    }

    /** The channel; the append agent starts now unless {@code startAgent} is false. */
    private void connect(boolean startAgent) {
        if (startAgent) {
            appends.start();
        }
        produce = new ProduceHandler(registry, 1 << 20, appends);
        ApiHandler other = (context, body) -> {
            otherApiCalls.add(context.header().apiKey());
            // Any header-only answer will do: the test reads only correlation ids (a header-only
            // answer always carries an error, spec decision 9.h).
            context.respondError(Errors.INVALID_REQUEST);
        };
        RequestDispatcher dispatcher = new RequestDispatcher(Map.of(ApiKeys.PRODUCE, produce, ApiKeys.METADATA, other));
        Executor manual = pool::add;
        channel = new EmbeddedChannel(new ConnectionHandler(dispatcher, manual, true));
    }

    @AfterEach
    void close() throws Exception {
        appends.close();
        Object o;
        while ((o = channel.readOutbound()) != null) {
            ReferenceCountUtil.release(o);
        }
        channel.finishAndReleaseAll();
        registry.close();
    }

    private static ByteBuf payload(short apiKey, int correlationId, ProduceRequest body) {
        ByteBuf frame = Unpooled.directBuffer();
        RequestHeader header = RequestHeader.of(apiKey, (short) 0, correlationId, "test");
        if (body != null) {
            Frames.writeRequest(frame, header, body);
        } else {
            Frames.writeRequest(frame, header, out -> {});
        }
        return frame.skipBytes(Frames.LENGTH_FIELD_SIZE);
    }

    private static ProduceRequest produce(String topic) {
        return new ProduceRequest(
                null,
                (short) 1,
                30_000,
                List.of(new ProduceRequest.TopicData(topic, List.of(new ProduceRequest.PartitionData(0, batch())))));
    }

    private static ByteBuf batch() {
        ByteBuf records = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(records, 1_700_000_000_000L);
        b.append(1_700_000_000_000L, null, new byte[10]);
        b.close();
        return records;
    }

    /** Correlation ids of the responses written so far, waiting up to 10 s for {@code count}. */
    private List<Integer> responses(int count) throws InterruptedException {
        List<Integer> ids = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ids.size() < count && System.nanoTime() < deadline) {
            channel.runPendingTasks();
            ByteBuf frame;
            while ((frame = channel.readOutbound()) != null) {
                frame.skipBytes(Frames.LENGTH_FIELD_SIZE);
                ids.add(ResponseHeader.read(frame).correlationId());
                frame.release();
            }
            Thread.sleep(5);
        }
        return ids;
    }

    private void runPool() {
        Runnable r;
        while ((r = pool.poll()) != null) {
            r.run();
        }
    }

    @Test
    void aProduceToAKnownTopicIsHandedOffOnTheEventLoop() throws Exception {
        connect(true);
        channel.writeInbound(payload(ApiKeys.PRODUCE, 1, produce("t")));
        assertThat(pool).as("no pool task").isEmpty();
        assertThat(responses(1)).containsExactly(1);
        assertThat(registry.partition("t", 0).logEndOffset()).isEqualTo(1);
    }

    @Test
    void aProduceThatMayWaitAndOtherApisGoThroughThePool() throws Exception {
        connect(true);
        // Auto-creation does file I/O (and, in a cluster, waits for the controller): not on the event loop.
        channel.writeInbound(payload(ApiKeys.PRODUCE, 1, produce("new-topic")));
        assertThat(pool).hasSize(1);
        runPool();
        assertThat(responses(1)).containsExactly(1);
        assertThat(registry.hasTopic("new-topic")).isTrue();

        channel.writeInbound(payload(ApiKeys.METADATA, 2, null));
        assertThat(otherApiCalls).isEmpty();
        runPool();
        assertThat(otherApiCalls).containsExactly(ApiKeys.METADATA);
        assertThat(responses(1)).containsExactly(2);
    }

    @Test
    void aProduceBehindARequestStillInThePoolWaitsForItsTurn() throws Exception {
        connect(true);
        channel.writeInbound(payload(ApiKeys.METADATA, 1, null));
        channel.writeInbound(payload(ApiKeys.PRODUCE, 2, produce("t")));
        assertThat(registry.partition("t", 0).logEndOffset())
                .as("not appended before the earlier request ran")
                .isZero();
        runPool();
        assertThat(responses(2)).containsExactly(1, 2);
        assertThat(registry.partition("t", 0).logEndOffset()).isEqualTo(1);
        // Nothing pending any more: the next one is handed off on the event loop again.
        channel.writeInbound(payload(ApiKeys.PRODUCE, 3, produce("t")));
        assertThat(pool).isEmpty();
        assertThat(responses(1)).containsExactly(3);
    }

    @Test
    void onceTheAppendQueueIsHalfFullProducesGoThroughThePoolAndTheEventLoopNeverWaits() throws Exception {
        connect(false); // the agent does not drain yet: the queue (16) fills
        for (int id = 1; id <= 12; id++) {
            channel.writeInbound(payload(ApiKeys.PRODUCE, id, produce("t")));
        }
        // Requests 1-9 found the queue at most half full (0..8 queued) and were queued on the event
        // loop; from request 10 on, the pool takes them (and keeps the order behind them).
        assertThat(pool).as("one drain task for requests 10-12").hasSize(1);
        appends.start();
        assertThat(responses(9)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9);
        runPool();
        assertThat(responses(3)).containsExactly(10, 11, 12);
        assertThat(registry.partition("t", 0).logEndOffset()).isEqualTo(12);
    }

    /**
     * The race {@link AppendService#hasRoom} leaves open: other threads filled a queue between the
     * event loop's check and its submit. The event loop does not wait: the partitions from the full
     * one on go to the pool, ahead of the connection's later requests (which append after them), and
     * the connection's reads pause until the agent made room.
     */
    @Test
    void aQueueFullAtTheEventLoopsSubmitSendsTheRestOfTheRequestToThePoolInOrder() throws Exception {
        connect(false);
        EmbeddedChannel others = new EmbeddedChannel();
        for (int i = 0; i < 16; i++) { // another connection fills u-1's queue
            RequestContext c = new RequestContext(others, RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 100 + i, "o"));
            PendingProduce p = new PendingProduce(c, new String[] {"u"}, new int[] {0});
            assertThat(appends.submit(registry.partition("u", 1), p, 0, batch(), false, null))
                    .isEqualTo(AppendService.QUEUED);
        }
        ProduceRequest request = produceTo("u", 0, 1);
        RequestContext context = new RequestContext(channel, RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 1, "test"));
        produce.handleDecoded(context, request); // returns at once: the event loop never waits
        request.topicData().get(0).partitions().forEach(p -> p.records().release()); // the frame's reference
        assertThat(pool).as("the rest of request 1 on the pool").hasSize(1);
        assertThat(channel.config().isAutoRead()).as("reads paused").isFalse();
        channel.writeInbound(payload(ApiKeys.PRODUCE, 2, produceTo("u", 1)));
        assertThat(pool).as("request 2 behind it, in the same drain task").hasSize(1);
        appends.start();
        Thread runner = Thread.ofPlatform().start(this::runPool); // request 1's rest waits for room
        Map<Integer, List<Long>> baseOffsets = new java.util.TreeMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (baseOffsets.size() < 2 && System.nanoTime() < deadline) {
            channel.runPendingTasks();
            ByteBuf frame;
            while ((frame = channel.readOutbound()) != null) {
                frame.skipBytes(Frames.LENGTH_FIELD_SIZE);
                int id = ResponseHeader.read(frame).correlationId();
                List<Long> bases = new ArrayList<>();
                for (ProduceResponse.PartitionResponse r :
                        ProduceResponse.read(frame).responses().get(0).partitions()) {
                    assertThat(r.errorCode()).isEqualTo(Errors.NONE);
                    bases.add(r.baseOffset());
                }
                baseOffsets.put(id, bases);
                frame.release();
            }
            Thread.sleep(5);
        }
        runner.join(10_000);
        assertThat(baseOffsets)
                .as("u-1: the 16 queued first, then request 1, then request 2")
                .containsExactly(Map.entry(1, List.of(0L, 16L)), Map.entry(2, List.of(17L)));
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead()).as("resumed").isTrue();
        others.finishAndReleaseAll();
    }

    /** A Produce of one single-record batch to each of {@code partitions} of {@code topic}. */
    private static ProduceRequest produceTo(String topic, int... partitions) {
        List<ProduceRequest.PartitionData> data = new ArrayList<>();
        for (int p : partitions) {
            data.add(new ProduceRequest.PartitionData(p, batch()));
        }
        return new ProduceRequest(null, (short) 1, 30_000, List.of(new ProduceRequest.TopicData(topic, data)));
    }
}
