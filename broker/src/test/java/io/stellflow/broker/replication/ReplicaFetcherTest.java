package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.config.ReplicaFetcherConfig;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.network.TransportType;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiMessage;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.ApiVersionsResponse.ApiVersionRange;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One {@link ReplicaFetcher} against a scripted leader on a real socket: the request sequence
 * (ApiVersions, one OffsetForLeaderEpoch for all partitions, then Fetch v1 with replicaId, the epoch
 * and the log end offsets), partitions split over {@code replica.fetch.max.in.flight} outstanding
 * Fetches with each partition in exactly one, an unanswered Fetch closing the connection after
 * {@code replica.socket.timeout.ms} and a reconnect, and OFFSET_OUT_OF_RANGE below the leader's log
 * start restarting the log there, and a backoff that waits for the fetcher's injected clock.
 */
@IntegrationTest
class ReplicaFetcherTest {
    private static final int FOLLOWER = 2;
    private static final int LEADER = 1;
    private static final int EPOCH = 3;
    /** replica.fetch.backoff.ms = 50, replica.fetch.max.in.flight = 2, replica.socket.timeout.ms = 1500. */
    private static final ReplicaFetcherConfig CONFIG = new ReplicaFetcherConfig(4096, 65536, 200, 1, 50, 2, 1500);

    @TempDir
    Path dir;

    private ScriptedLeader leader;
    private EventLoopGroup group;
    private ReplicaFetcher fetcher;
    private final List<UnifiedLog> logs = new ArrayList<>();

    /** A received request: its header and a copy of its body. */
    record Received(int connection, RequestHeader header, ByteBuf body) {}

    /** Accepts connections, answers ApiVersions itself, queues every other request for the test. */
    static final class ScriptedLeader implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final BlockingQueue<Received> requests = new LinkedBlockingQueue<>();
        final List<Socket> sockets = new CopyOnWriteArrayList<>();
        final Thread acceptor;
        /** The highest Fetch version this leader offers. */
        volatile short fetchMax = 1;

        ScriptedLeader() throws IOException {
            acceptor = new Thread(this::accept, "scripted-leader");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private void accept() {
            try {
                while (true) {
                    Socket s = server.accept();
                    int index = sockets.size();
                    sockets.add(s);
                    Thread reader = new Thread(() -> read(index, s), "scripted-leader-" + index);
                    reader.setDaemon(true);
                    reader.start();
                }
            } catch (IOException e) {
                // closed
            }
        }

        private void read(int connection, Socket s) {
            try {
                DataInputStream in = new DataInputStream(s.getInputStream());
                while (true) {
                    byte[] payload = new byte[in.readInt()];
                    in.readFully(payload);
                    ByteBuf buf = Unpooled.wrappedBuffer(payload);
                    RequestHeader header = RequestHeader.read(buf);
                    if (header.apiKey() == ApiKeys.API_VERSIONS) {
                        answer(
                                connection,
                                header.correlationId(),
                                new ApiVersionsResponse(
                                        List.of(
                                                new ApiVersionRange(ApiKeys.FETCH, (short) 0, fetchMax),
                                                new ApiVersionRange(
                                                        ApiKeys.OFFSET_FOR_LEADER_EPOCH, (short) 0, (short) 0)),
                                        "scripted",
                                        "1",
                                        List.of()));
                    } else {
                        requests.add(new Received(connection, header, buf));
                    }
                }
            } catch (IOException e) {
                // closed
            }
        }

        void answer(int connection, int correlationId, ApiMessage body) throws IOException {
            ByteBuf out = Unpooled.buffer();
            try {
                Frames.writeResponse(out, correlationId, body);
                byte[] bytes = new byte[out.readableBytes()];
                out.readBytes(bytes);
                Socket s = sockets.get(connection);
                synchronized (s) {
                    OutputStream os = s.getOutputStream();
                    os.write(bytes);
                    os.flush();
                }
            } finally {
                out.release();
            }
        }

        Received next(short apiKey) throws InterruptedException {
            Received r = requests.poll(10, TimeUnit.SECONDS);
            assertThat(r).as("a %s request", ApiKeys.name(apiKey)).isNotNull();
            assertThat(r.header().apiKey()).isEqualTo(apiKey);
            return r;
        }

        int port() {
            return server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    @BeforeEach
    void start() throws IOException {
        leader = new ScriptedLeader();
        Transport nio = Transport.select(TransportType.NIO);
        group = nio.newEventLoopGroup(1, new DefaultThreadFactory("fetcher-test-io", true));
        fetcher = new ReplicaFetcher(
                LEADER,
                FOLLOWER,
                CONFIG,
                id -> InetSocketAddress.createUnresolved("127.0.0.1", leader.port()),
                group,
                nio.socketChannelClass(),
                ReplicationMetrics.NOOP);
    }

    @AfterEach
    void stop() throws Exception {
        fetcher.close();
        leader.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        for (UnifiedLog log : logs) {
            log.close();
        }
    }

    private Partition follower(int id, int records) throws IOException {
        UnifiedLog log = ReplicaLogs.open(dir.resolve("t-" + id));
        logs.add(log);
        if (records > 0) {
            ReplicaLogs.append(log, 0, records, "r" + id);
        }
        Partition p = new Partition("t", id, EPOCH, log);
        p.becomeFollower(LEADER, EPOCH);
        return p;
    }

    /** Answers an OffsetForLeaderEpoch request: each asked epoch ends at the given offset. */
    private void answerEpochs(Received r, long endOffset) throws IOException {
        OffsetForLeaderEpochRequest req = OffsetForLeaderEpochRequest.read(r.body());
        assertThat(req.replicaId()).isEqualTo(FOLLOWER);
        List<OffsetForLeaderEpochResponse.Topic> topics = new ArrayList<>();
        for (OffsetForLeaderEpochRequest.Topic t : req.topics()) {
            List<OffsetForLeaderEpochResponse.EpochEndOffset> ps = new ArrayList<>();
            for (OffsetForLeaderEpochRequest.PartitionEpoch p : t.partitions()) {
                assertThat(p.currentLeaderEpoch()).isEqualTo(EPOCH);
                ps.add(new OffsetForLeaderEpochResponse.EpochEndOffset(
                        p.partition(), Errors.NONE, p.leaderEpoch(), endOffset));
            }
            topics.add(new OffsetForLeaderEpochResponse.Topic(t.topic(), ps));
        }
        leader.answer(r.connection(), r.header().correlationId(), new OffsetForLeaderEpochResponse(topics));
    }

    private static Set<Integer> partitionsOf(FetchRequest f) {
        Set<Integer> ids = new HashSet<>();
        for (FetchRequest.FetchTopic t : f.topicPartitions()) {
            for (FetchRequest.FetchPartition p : t.partitions()) {
                assertThat(ids.add(p.partition()))
                        .as("partition %d twice", p.partition())
                        .isTrue();
            }
        }
        return ids;
    }

    /** Adds {@code p} to the fetcher, answers its epoch request with {@code endOffset}, returns its first Fetch. */
    private Received firstFetchAfterEpochs(Partition p, long endOffset) throws Exception {
        fetcher.add(p, EPOCH);
        answerEpochs(leader.next(ApiKeys.OFFSET_FOR_LEADER_EPOCH), endOffset);
        return leader.next(ApiKeys.FETCH);
    }

    /** Answers a one-partition Fetch with OFFSET_OUT_OF_RANGE and the leader's HW and log start offset. */
    private void answerOutOfRange(Received fetch, long highWatermark, long logStartOffset) throws IOException {
        answerPartition(
                fetch,
                new FetchResponseV1.PartitionData(
                        0,
                        Errors.OFFSET_OUT_OF_RANGE,
                        highWatermark,
                        logStartOffset,
                        highWatermark,
                        List.of(),
                        -1,
                        null));
    }

    /** An empty answer to a Fetch: no records, HW = each fetch offset. */
    private void answerEmpty(Received r, FetchRequest f) throws IOException {
        List<FetchResponseV1.Topic> topics = new ArrayList<>();
        for (FetchRequest.FetchTopic t : f.topicPartitions()) {
            List<FetchResponseV1.PartitionData> ps = new ArrayList<>();
            for (FetchRequest.FetchPartition p : t.partitions()) {
                ps.add(new FetchResponseV1.PartitionData(
                        p.partition(), Errors.NONE, p.fetchOffset(), 0, p.fetchOffset(), List.of(), -1, null));
            }
            topics.add(new FetchResponseV1.Topic(t.topic(), ps));
        }
        leader.answer(r.connection(), r.header().correlationId(), new FetchResponseV1(0, topics));
    }

    @Test
    void partitionsAreSplitOverTheInFlightFetchesAndATimeoutReconnects() throws Exception {
        List<Partition> partitions = new ArrayList<>();
        for (int id = 0; id < 4; id++) {
            partitions.add(follower(id, 2 + id));
        }
        for (Partition p : partitions) {
            fetcher.add(p, EPOCH);
        }
        // Epoch requests are answered; Fetches are held (long-poll) until both slots are taken by
        // Fetches that together carry every partition: a Fetch sent before the last partitions were
        // reconciled is answered empty, which frees its slot.
        int asked = 0;
        Set<Integer> fetchedEver = new HashSet<>();
        List<Received> outstanding = new ArrayList<>();
        while (true) {
            Set<Integer> held = new HashSet<>();
            for (Received r : outstanding) {
                held.addAll(partitionsOf(FetchRequest.read(r.body().duplicate())));
            }
            if (outstanding.size() == 2 && held.size() == 4) {
                break;
            }
            if (outstanding.size() == 2) {
                Received first = outstanding.remove(0);
                answerEmpty(first, FetchRequest.read(first.body().duplicate()));
            }
            Received r = leader.requests.poll(10, TimeUnit.SECONDS);
            assertThat(r)
                    .as("more requests (asked %d, outstanding %d)", asked, outstanding.size())
                    .isNotNull();
            if (r.header().apiKey() == ApiKeys.OFFSET_FOR_LEADER_EPOCH) {
                asked += OffsetForLeaderEpochRequest.read(r.body().duplicate())
                        .topics()
                        .get(0)
                        .partitions()
                        .size();
                answerEpochs(r, 100);
                continue;
            }
            assertThat(r.header().apiKey()).isEqualTo(ApiKeys.FETCH);
            assertThat(r.header().apiVersion()).isEqualTo((short) 1);
            FetchRequest f = FetchRequest.read(r.body().duplicate());
            assertThat(f.replicaId()).isEqualTo(FOLLOWER);
            assertThat(f.maxWaitMs()).isEqualTo(200);
            assertThat(f.maxBytes()).isEqualTo(65536);
            for (FetchRequest.FetchPartition p : f.topicPartitions().get(0).partitions()) {
                assertThat(p.currentLeaderEpoch()).isEqualTo(EPOCH);
                assertThat(p.fetchOffset())
                        .as("the log end of partition %d", p.partition())
                        .isEqualTo(2 + p.partition());
                assertThat(p.partitionMaxBytes()).isEqualTo(4096);
            }
            Set<Integer> ids = partitionsOf(f);
            assertThat(held).as("a partition in two outstanding Fetches").doesNotContainAnyElementsOf(ids);
            fetchedEver.addAll(ids);
            outstanding.add(r);
        }
        assertThat(asked).as("each partition reconciled once").isEqualTo(4);
        assertThat(fetchedEver).containsExactlyInAnyOrder(0, 1, 2, 3);
        // No third Fetch while two are outstanding.
        assertThat(leader.requests.poll(300, TimeUnit.MILLISECONDS)).isNull();

        // Unanswered for replica.socket.timeout.ms (1500): the fetcher reconnects and fetches again,
        // without asking for epochs again (the logs are reconciled).
        long start = System.nanoTime();
        Received again = leader.requests.poll(10, TimeUnit.SECONDS);
        assertThat(again).isNotNull();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(900);
        assertThat(again.connection()).isGreaterThan(outstanding.get(0).connection());
        assertThat(again.header().apiKey()).isEqualTo(ApiKeys.FETCH);
    }

    @Test
    void aLeaderThatOffersFetchV2GetsThisBrokersEpochInEachFetchAndAnOlderOneV1() throws Exception {
        Partition older = follower(0, 3);
        Received v1 = firstFetchAfterEpochs(older, 3);
        assertThat(v1.header().apiVersion())
                .as("the leader offers Fetch up to v1")
                .isEqualTo((short) 1);
        assertThat(FetchRequest.read(v1.body().duplicate(), (short) 1).replicaEpoch())
                .isEqualTo(FetchRequest.NO_REPLICA_EPOCH);
        fetcher.close();
        leader.close();

        leader = new ScriptedLeader();
        leader.fetchMax = 2;
        Transport nio = Transport.select(TransportType.NIO);
        AtomicLong brokerEpoch = new AtomicLong(77);
        fetcher = new ReplicaFetcher(
                LEADER,
                FOLLOWER,
                brokerEpoch::get,
                CONFIG,
                id -> InetSocketAddress.createUnresolved("127.0.0.1", leader.port()),
                group,
                nio.socketChannelClass(),
                ReplicationMetrics.NOOP,
                System::nanoTime);
        Partition p = follower(1, 3);
        Received v2 = firstFetchAfterEpochs(p, 3);
        assertThat(v2.header().apiVersion()).isEqualTo(FetchRequest.VERSION_REPLICA_EPOCH);
        FetchRequest request = FetchRequest.read(v2.body().duplicate(), FetchRequest.VERSION_REPLICA_EPOCH);
        assertThat(request.replicaId()).isEqualTo(FOLLOWER);
        assertThat(request.replicaEpoch()).isEqualTo(77);
        assertThat(request.topicPartitions().get(0).partitions().get(0).fetchOffset())
                .isEqualTo(3);
    }

    @Test
    void outOfRangeAboveTheLeadersEndAgainAfterReconcilingRestartsTheLogAtTheLeadersLogStart() throws Exception {
        Partition p = follower(0, 10);
        // The leader's answers keep the whole log (as when the follower falls back to its own HW), yet
        // its log ends below: every Fetch at 10 is out of range.
        Received first = firstFetchAfterEpochs(p, 10);
        assertThat(fetchOffset(first)).isEqualTo(10);
        answerOutOfRange(first, 4, 0);
        // Once: reconcile by epoch again, keep the log.
        answerEpochs(leader.next(ApiKeys.OFFSET_FOR_LEADER_EPOCH), 10);
        assertThat(p.log().logEndOffset()).isEqualTo(10);
        answerOutOfRange(leader.next(ApiKeys.FETCH), 4, 0);
        // Twice in a row: start over at the leader's log start instead of looping.
        Received next = leader.next(ApiKeys.FETCH);
        assertThat(fetchOffset(next)).isZero();
        assertThat(p.log().logEndOffset()).isZero();
        assertThat(p.highWatermark()).isZero();
    }

    @Test
    void outOfRangeBelowTheLeadersLogStartRestartsTheLogThere() throws Exception {
        Partition p = follower(0, 5);
        Received fetch = firstFetchAfterEpochs(p, 5);
        assertThat(fetchOffset(fetch)).isEqualTo(5);
        answerOutOfRange(fetch, 120, 100);
        Received next = leader.next(ApiKeys.FETCH);
        FetchRequest.FetchPartition fp = FetchRequest.read(next.body())
                .topicPartitions()
                .get(0)
                .partitions()
                .get(0);
        assertThat(fp.fetchOffset()).isEqualTo(100);
        assertThat(fp.logStartOffset()).isEqualTo(100);
        assertThat(p.log().logStartOffset()).isEqualTo(100);
        assertThat(p.log().logEndOffset()).isEqualTo(100);
        assertThat(p.highWatermark()).isEqualTo(100);
    }

    @Test
    void batchesThatDoNotContinueTheLogCutItWhereTheLeadersBatchStartsNotAtItsHighWatermark() throws Exception {
        // The leader: [0..1] and [2..6] at the epoch. The follower: the same [0..1], then a batch
        // [2..4] the leader never had, at the same epoch (what a late leader append used to leave),
        // so epoch-based truncation removes nothing and the fetch offset 5 is inside [2..6].
        UnifiedLog leaderLog = ReplicaLogs.open(dir.resolve("leader"));
        logs.add(leaderLog);
        ReplicaLogs.append(leaderLog, EPOCH, 2, "a");
        ReplicaLogs.append(leaderLog, EPOCH, 5, "b");
        UnifiedLog log = ReplicaLogs.open(dir.resolve("t-0"));
        logs.add(log);
        ReplicaLogs.append(log, EPOCH, 2, "a");
        ReplicaLogs.append(log, EPOCH, 3, "stale");
        Partition p = new Partition("t", 0, EPOCH, log);
        p.becomeFollower(LEADER, EPOCH);
        p.updateFollowerHighWatermark(0); // behind the leader's HW: records above it may be committed
        Received fetch = firstFetchAfterEpochs(p, 7);
        assertThat(fetchOffset(fetch)).isEqualTo(5);
        answerRecords(fetch, 5, ReplicaLogs.read(leaderLog, 5), 7);

        // Cut at 2, where the leader's batch [2..6] starts (not at the HW, 0), reconciled again,
        // fetched from there.
        answerEpochs(leader.next(ApiKeys.OFFSET_FOR_LEADER_EPOCH), 7);
        Received again = leader.next(ApiKeys.FETCH);
        assertThat(fetchOffset(again)).isEqualTo(2);
        assertThat(log.logEndOffset()).isEqualTo(2);
        answerRecords(again, 2, ReplicaLogs.read(leaderLog, 2), 7);
        assertThat(fetchOffset(leader.next(ApiKeys.FETCH))).isEqualTo(7);
        assertThat(ReplicaLogs.bytes(log)).isEqualTo(ReplicaLogs.bytes(leaderLog));
        assertThat(p.highWatermark()).isEqualTo(7);
    }

    @Test
    void aBackedOffPartitionWaitsForTheFetchersClockNotTheWallClock() throws Exception {
        fetcher.close();
        AtomicLong nanos = new AtomicLong(-5_000_000_000L); // nanoTime may be negative
        fetcher = new ReplicaFetcher(
                LEADER,
                FOLLOWER,
                () -> -1L,
                CONFIG,
                id -> InetSocketAddress.createUnresolved("127.0.0.1", leader.port()),
                group,
                Transport.select(TransportType.NIO).socketChannelClass(),
                ReplicationMetrics.NOOP,
                nanos::get);
        Partition p = follower(0, 5);
        fetcher.add(p, EPOCH);
        Received epochs = leader.next(ApiKeys.OFFSET_FOR_LEADER_EPOCH);
        OffsetForLeaderEpochRequest req = OffsetForLeaderEpochRequest.read(epochs.body());
        leader.answer(
                epochs.connection(),
                epochs.header().correlationId(),
                new OffsetForLeaderEpochResponse(List.of(new OffsetForLeaderEpochResponse.Topic(
                        "t",
                        List.of(new OffsetForLeaderEpochResponse.EpochEndOffset(
                                req.topics().get(0).partitions().get(0).partition(),
                                Errors.NOT_LEADER_OR_FOLLOWER,
                                -1,
                                -1))))));

        // The 50 ms backoff passes many times over in real time (the fetcher wakes up every 50 ms to
        // look), but not on the fetcher's clock: nothing is sent.
        assertThat(leader.requests.poll(500, TimeUnit.MILLISECONDS))
                .as("sent during the backoff")
                .isNull();
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(49));
        assertThat(leader.requests.poll(200, TimeUnit.MILLISECONDS))
                .as("sent 1 ms before the backoff ends")
                .isNull();
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        answerEpochs(leader.next(ApiKeys.OFFSET_FOR_LEADER_EPOCH), 5);
        assertThat(fetchOffset(leader.next(ApiKeys.FETCH))).isEqualTo(5);
    }

    private static long fetchOffset(Received fetch) {
        return FetchRequest.read(fetch.body().duplicate())
                .topicPartitions()
                .get(0)
                .partitions()
                .get(0)
                .fetchOffset();
    }

    /** Answers a one-partition Fetch of topic "t" with {@code data}. */
    private void answerPartition(Received fetch, FetchResponseV1.PartitionData data) throws IOException {
        leader.answer(
                fetch.connection(),
                fetch.header().correlationId(),
                new FetchResponseV1(0, List.of(new FetchResponseV1.Topic("t", List.of(data)))));
    }

    /** Answers a one-partition Fetch with batches whose baseOffsetDelta counts from {@code base}. */
    private void answerRecords(Received fetch, long base, ByteBuf records, long highWatermark) throws IOException {
        try {
            answerPartition(
                    fetch,
                    new FetchResponseV1.PartitionData(
                            0, Errors.NONE, highWatermark, 0, highWatermark, List.of(), base, records));
        } finally {
            records.release();
        }
    }
}
