package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.network.TransportType;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Zero-copy Fetch (file regions) against the copy path: two brokers with the same log (small
 * segments, so reads cross segment boundaries), one with {@code fetch.zero.copy=true} on the
 * transport under test and one copying; every v0 and v1 response must be byte-identical. Plus the
 * v1 round trip: stored batches untouched, one segment per partition, offsets from
 * recordsBaseOffset. The zero-copy nodes (one per transport) and the copying one (nio) are shared by
 * the tests, each with a topic of its own.
 */
@IntegrationTest
class ZeroCopyFetchTest {
    /** Records per batch in each round of {@link #fill}. */
    private static final int[] BATCH_RECORDS = {3, 4, 1};

    @RegisterExtension
    static final TestBroker.Shared ZERO_COPY = new TestBroker.Shared(p -> smallSegments(p, true));

    @RegisterExtension
    static final TestBroker.Shared COPY = new TestBroker.Shared(p -> smallSegments(p, false));

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    final List<RawClient> clients = new ArrayList<>();
    String t;

    /** Topics are numbered: the copying node serves the runs of every transport. */
    private static final AtomicInteger RUNS = new AtomicInteger();

    @BeforeEach
    void name(TestInfo test) {
        t = test.getTestMethod().orElseThrow().getName() + "-" + RUNS.incrementAndGet();
    }

    @AfterEach
    void stop() throws Exception {
        for (RawClient c : clients) {
            c.close();
        }
    }

    private static void smallSegments(Properties props, boolean zeroCopy) {
        props.setProperty("fetch.zero.copy", Boolean.toString(zeroCopy));
        props.setProperty("log.segment.bytes", "16384");
    }

    private RawClient start(String transport, boolean zeroCopy) throws IOException {
        StellflowServer server = (zeroCopy ? ZERO_COPY : COPY).get(transport);
        RawClient client = new RawClient(server.port());
        clients.add(client);
        Requests.createTopic(client, t, 2);
        return client;
    }

    /** Same batches to both brokers: 30 batches of 1 KiB-valued records, segments of 16 KiB. */
    private long fill(RawClient... brokers) throws IOException {
        long next = 0;
        for (int round = 0; round < 10; round++) {
            for (int count : BATCH_RECORDS) {
                byte[] batch = Requests.batchOfSize(count, 1000, 1_700_000_000_000L + round);
                for (RawClient c : brokers) {
                    assertThat(Requests.produceOne(c, t, 0, batch).baseOffset()).isEqualTo(next);
                }
                next += count;
            }
        }
        return next;
    }

    private static byte[] rawFetch(RawClient client, short version, FetchRequest request) throws IOException {
        client.send(RequestHeader.of(ApiKeys.FETCH, version, 7, "test"), request);
        return client.receiveRawFrame();
    }

    private FetchRequest fetch(long offset, int maxBytes) {
        return new FetchRequest(
                -1,
                0,
                1,
                maxBytes,
                (byte) 0,
                0,
                List.of(new FetchRequest.FetchTopic(
                        t,
                        List.of(
                                new FetchRequest.FetchPartition(0, -1, offset, -1L, maxBytes),
                                new FetchRequest.FetchPartition(1, -1, 0, -1L, maxBytes)))));
    }

    private static void assumeAvailable(String transport) {
        assumeTrue(Transport.isAvailable(TransportType.parse("transport", transport)), transport + " unavailable");
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void zeroCopyResponsesAreByteIdenticalToTheCopyPath(String transport) throws Exception {
        assumeAvailable(transport);
        RawClient zero = start(transport, true);
        RawClient copy = start("nio", false);
        long end = fill(zero, copy);
        for (short version = 0; version <= 1; version++) {
            for (long offset = 0; offset <= end; offset += 3) {
                for (int maxBytes : new int[] {1, 5000, 20_000, 1 << 20}) {
                    byte[] z = rawFetch(zero, version, fetch(offset, maxBytes));
                    byte[] c = rawFetch(copy, version, fetch(offset, maxBytes));
                    assertThat(ByteBufUtil.hexDump(z))
                            .as("v%d offset %d maxBytes %d", version, offset, maxBytes)
                            .isEqualTo(ByteBufUtil.hexDump(c));
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void v0FromEveryOffsetDecodesToTheRightRecords(String transport) throws Exception {
        assumeAvailable(transport);
        RawClient client = start(transport, true);
        long end = fill(client);
        for (long offset = 0; offset < end; offset++) {
            FetchResponse.PartitionData p = Requests.fetchOne(client, fetch(offset, 1 << 20));
            assertThat(p.errorCode()).isEqualTo(Errors.NONE);
            long from = offset;
            List<DecodedRecord> records = RecordBatchReader.decode(p.records(), from);
            assertThat(records).isNotEmpty();
            assertThat(records.get(records.size() - 1).offset()).isEqualTo(end - 1);
            assertThat(records.stream().filter(r -> r.offset() >= from).findFirst())
                    .hasValueSatisfying(r -> assertThat(r.offset()).isEqualTo(from));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void v1SendsStoredBatchesOfOneSegmentWithTheirBaseOffset(String transport) throws Exception {
        assumeAvailable(transport);
        RawClient client = start(transport, true);
        long end = fill(client);
        long position = 0;
        int fetches = 0;
        while (position < end) {
            byte[] frame = rawFetch(client, (short) 1, fetch(position, 1 << 20));
            ByteBuf buf = Unpooled.wrappedBuffer(frame, 4, frame.length - 4);
            assertThat(buf.readInt()).isEqualTo(7);
            buf.skipBytes(8); // headerVersion, errorCode, throttleTimeMs
            FetchResponseV1 resp = FetchResponseV1.read(buf);
            FetchResponseV1.PartitionData p =
                    resp.responses().get(0).partitions().get(0);
            FetchResponseV1.PartitionData empty =
                    resp.responses().get(0).partitions().get(1);
            assertThat(empty.recordsBaseOffset()).isEqualTo(-1L);
            assertThat(empty.records().readableBytes()).isZero();
            assertThat(p.errorCode()).isEqualTo(Errors.NONE);
            assertThat(p.highWatermark()).isEqualTo(end);
            ByteBuf records = p.records();
            // One segment of 16 KiB at most: batches untouched, stored deltas relative to its base.
            assertThat(records.readableBytes()).isPositive().isLessThanOrEqualTo(16384 + 8192);
            assertThat(p.recordsBaseOffset()).isBetween(0L, position);
            int delta0 = RecordBatchLayout.baseOffsetDelta(records, 0);
            assertThat(p.recordsBaseOffset() + delta0).isLessThanOrEqualTo(position);
            List<DecodedRecord> decoded = RecordBatchReader.decode(records, p.recordsBaseOffset());
            long expected = p.recordsBaseOffset() + delta0;
            for (DecodedRecord r : decoded) {
                assertThat(r.offset()).isEqualTo(expected++);
            }
            assertThat(expected).isGreaterThan(position);
            position = expected;
            fetches++;
        }
        assertThat(fetches).as("fetches, one segment each").isGreaterThan(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void largeZeroCopyResponsesArriveWhole(String transport) throws Exception {
        assumeAvailable(transport);
        // A node of its own: larger batches, one segment.
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("message.max.bytes", Integer.toString(4 << 20));
        StellflowServer own = NODES.start(props);
        RawClient client = new RawClient(own.port());
        clients.add(client);
        Requests.createTopic(client, t, 2);
        byte[] batch = Requests.batchOfSize(100, 20_000, 1_700_000_000_000L); // ~2 MB
        for (int i = 0; i < 8; i++) {
            Requests.produceOne(client, t, 0, batch);
        }
        FetchResponse.PartitionData p = Requests.fetchOne(client, fetch(0, 64 << 20));
        assertThat(p.records().readableBytes()).isEqualTo(8 * batch.length);
        List<DecodedRecord> records = RecordBatchReader.decode(p.records(), 0);
        assertThat(records).hasSize(800);
        assertThat(records.get(799).offset()).isEqualTo(799);
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll", "io_uring"})
    void v2IsAnsweredInTheV1LayoutAndAboveV2IsUnsupported(String transport) throws Exception {
        assumeAvailable(transport);
        RawClient client = start(transport, true);
        long end = fill(client);
        FetchRequest request = fetch(0, 1 << 20);
        client.send(
                RequestHeader.of(ApiKeys.FETCH, FetchRequest.VERSION_REPLICA_EPOCH, 7, "test"),
                out -> request.write(out, FetchRequest.VERSION_REPLICA_EPOCH));
        byte[] frame = client.receiveRawFrame();
        ByteBuf buf = Unpooled.wrappedBuffer(frame, 4, frame.length - 4);
        assertThat(buf.readInt()).isEqualTo(7);
        buf.skipBytes(8); // headerVersion, errorCode, throttleTimeMs
        FetchResponseV1.PartitionData p =
                FetchResponseV1.read(buf).responses().get(0).partitions().get(0);
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        assertThat(p.highWatermark()).isEqualTo(end);
        List<DecodedRecord> decoded = RecordBatchReader.decode(p.records(), p.recordsBaseOffset());
        assertThat(decoded).isNotEmpty();
        assertThat(decoded.get(0).offset()).isZero();

        client.send(RequestHeader.of(ApiKeys.FETCH, (short) 3, 9, "test"), fetch(0, 100));
        RawClient.Response r = client.receive();
        assertThat(r.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION);
    }
}
