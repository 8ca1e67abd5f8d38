package io.stellflow.client;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsResponse;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A tiny in-process broker on 127.0.0.1 for client tests, built on the protocol codecs. Keeps each
 * partition as a list of stored batches (heap copies) and answers ApiVersions, Metadata, Produce,
 * Fetch, ListOffsets and CreateTopic at v0. Tests can inject per-partition Produce errors, hold
 * responses and release them in reverse order, and inspect every request received.
 *
 * <p>Idempotence (spec §6.12), in short: InitProducerId hands out ids 1000, 1001, ...; a batch with a
 * producer id is checked per partition against the next sequence of its id, an exact retry of one of
 * the id's last 5 batches is answered with its first offset, anything else {@code
 * OUT_OF_ORDER_SEQUENCE_NUMBER}. {@link #dropNextProduceResponses} appends and then closes the
 * connection instead of answering (a lost ack).
 *
 * <p>Transactions ({@link #transactionCoordinator}), in short: it is its own transaction coordinator;
 * InitProducerId with a transactional id gives the id's producer id (1000, 1001, ... as above) and
 * the next epoch, BeginTransaction the next transaction sequence, EndTransaction answers NONE (no
 * markers: the log keeps what was appended); {@link #events} records the Produce and End requests in
 * arrival order.
 *
 * <p>Thread-safety: state is guarded by {@code this}; requests are handled on one I/O thread.
 */
final class FakeBroker implements AutoCloseable {
    record StoredBatch(long baseOffset, int recordCount, byte[] bytes) {}

    record ProduceSeen(String topic, int partition, int batchCount, int recordCount) {}

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    /** Accepted connections, closed by {@link #close} so clients see the broker go away at once. */
    private final io.netty.channel.group.ChannelGroup accepted =
            new io.netty.channel.group.DefaultChannelGroup(io.netty.util.concurrent.GlobalEventExecutor.INSTANCE);

    private final Map<String, Integer> topics = new LinkedHashMap<>();
    private final Map<TopicPartition, List<StoredBatch>> logs = new HashMap<>();
    private final Map<TopicPartition, ArrayDeque<Short>> produceErrors = new HashMap<>();
    final List<ProduceSeen> produces = new CopyOnWriteArrayList<>();
    final AtomicInteger metadataRequests = new AtomicInteger();
    final AtomicInteger produceRequests = new AtomicInteger();
    /** The highest Produce version advertised in ApiVersions (0: the spec's v0 only). */
    volatile short produceMaxVersion = 0;
    /** The apiVersion of every Produce request received, in order. */
    final java.util.concurrent.ConcurrentLinkedQueue<Short> produceVersions =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    final List<Integer> correlationIds = new CopyOnWriteArrayList<>();

    /** Idempotence: one of the last batches of a producer id on a partition. */
    private record Appended(int baseSequence, int recordCount, long baseOffset) {}

    /** Per partition and producer id, its last 5 appended batches, oldest first. */
    private final Map<TopicPartition, Map<Long, ArrayDeque<Appended>>> producerState = new HashMap<>();

    private long nextProducerId = 1000;
    final AtomicInteger initProducerIdRequests = new AtomicInteger();
    /** Every (producer id, base sequence) of a Produce batch received, in order. */
    final List<long[]> sequencesSeen = new CopyOnWriteArrayList<>();
    /** OUT_OF_ORDER_SEQUENCE_NUMBER answers given by the sequence check. */
    final AtomicInteger outOfOrderAnswers = new AtomicInteger();

    /**
     * A batch of more records than this is refused with MESSAGE_TOO_LARGE, nothing of its request's
     * partition appended (a stand-in for {@code message.max.bytes} with a predictable split).
     */
    volatile int maxBatchRecords = Integer.MAX_VALUE;

    /** MESSAGE_TOO_LARGE answers given for {@link #maxBatchRecords}. */
    final AtomicInteger tooLargeAnswers = new AtomicInteger();

    private int dropProduceResponses;
    /** Errors answered to the next InitProducerId requests, one each. */
    private final ArrayDeque<Short> initProducerIdErrors = new ArrayDeque<>();
    /** Whether ApiVersions offers InitProducerId (false: a broker without idempotent producers). */
    volatile boolean offersInitProducerId = true;

    synchronized void failNextInitProducerId(short code) {
        initProducerIdErrors.add(code);
    }

    /** The next {@code n} Produce requests are handled (appended) but answered by closing the connection. */
    synchronized void dropNextProduceResponses(int n) {
        dropProduceResponses = n;
    }

    /**
     * Answers requests of APIs this broker does not serve itself (the group APIs in the admin's
     * tests): given the header and the body, returns the response body's writer. Null: such a request
     * is a test failure.
     */
    interface ExtraApis {
        Consumer<ByteBuf> handle(RequestHeader header, ByteBuf body);
    }

    /** Extra API keys advertised at v0 up to the given max version, answered by {@link #extraApis}. */
    volatile Map<Short, Short> extraApiVersions = Map.of();

    volatile ExtraApis extraApis;
    /** More brokers the Metadata answer names, as ids 1, 2, ... (this one is id 0 and leads every partition). */
    volatile List<HostPort> otherBrokers = List.of();

    private int holdCount;
    private short holdApiKey = -1;
    private final List<Runnable> held = new ArrayList<>();

    /**
     * Whether this broker is also the transaction coordinator of every transactional id: it then
     * offers InitProducerId v1, FindCoordinator v1 (answering itself), BeginTransaction v1,
     * EndTransaction v2 and Produce v2. Off: InitProducerId with a transactional id is answered
     * FEATURE_NOT_ENABLED, and FindCoordinator, Begin and End go to {@link #extraApis}.
     */
    volatile boolean transactionCoordinator;

    /** Per transactional id: its producer id and its latest epoch. */
    private final Map<String, long[]> transactionalIds = new HashMap<>();

    private long nextTransactionSequence;

    /**
     * Requests in arrival order: {@code "produce t-0"} per partition of a Produce, {@code "end
     * commit"} or {@code "end abort"} per EndTransaction.
     */
    final List<String> events = new CopyOnWriteArrayList<>();

    /** Partitions the Metadata answer gives no leader (-1): a producer keeps their records queued. */
    volatile Set<TopicPartition> leaderless = Set.of();

    /** Produce responses held until {@link #releaseProduceResponses} (appended or refused already). */
    private final List<Runnable> gated = new ArrayList<>();

    private boolean gateProduceResponses;

    /** One permit per Produce response {@link #holdProduceResponses} held back. */
    final Semaphore heldProduceResponses = new Semaphore(0);

    FakeBroker() throws InterruptedException {
        this(0);
    }

    /** A broker on {@code port} of 127.0.0.1 (0: an ephemeral port), e.g. to come back where one died. */
    FakeBroker(int port) throws InterruptedException {
        server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        accepted.add(ch);
                        ch.pipeline()
                                .addLast(new LengthFieldBasedFrameDecoder(64 << 20, 0, 4, 0, 4))
                                .addLast(new SimpleChannelInboundHandler<ByteBuf>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
                                        handle(ctx, frame);
                                    }
                                });
                    }
                })
                .bind("127.0.0.1", port)
                .sync()
                .channel();
    }

    int port() {
        return ((java.net.InetSocketAddress) server.localAddress()).getPort();
    }

    String bootstrap() {
        return "127.0.0.1:" + port();
    }

    synchronized void createTopic(String name, int partitions) {
        topics.put(name, partitions);
        for (int p = 0; p < partitions; p++) {
            logs.putIfAbsent(new TopicPartition(name, p), new ArrayList<>());
        }
    }

    /** The next Produce for {@code tp} fails with {@code code} (queued, one per request). */
    synchronized void failNextProduce(TopicPartition tp, short code) {
        produceErrors.computeIfAbsent(tp, k -> new ArrayDeque<>()).add(code);
    }

    /** Holds the next {@code n} responses and sends them in reverse order once all arrived. */
    synchronized void holdAndReverse(int n) {
        holdAndReverse(n, (short) -1);
    }

    /** As {@link #holdAndReverse(int)} for responses to {@code apiKey} only (-1: any but ApiVersions). */
    synchronized void holdAndReverse(int n, short apiKey) {
        holdCount = n;
        holdApiKey = apiKey;
    }

    /**
     * Holds every Produce response from now on (the request is handled: appended or refused) until
     * {@link #releaseProduceResponses}; each held one adds a permit to {@link #heldProduceResponses}.
     */
    synchronized void holdProduceResponses() {
        gateProduceResponses = true;
    }

    /** Sends the Produce responses held by {@link #holdProduceResponses}, in order, and holds no more. */
    void releaseProduceResponses() {
        List<Runnable> release;
        synchronized (this) {
            gateProduceResponses = false;
            release = new ArrayList<>(gated);
            gated.clear();
        }
        release.forEach(Runnable::run);
    }

    /** Appends a batch directly (as if produced): bytes from a RecordBatchBuilder. */
    synchronized long append(TopicPartition tp, ByteBuf batchSet) {
        List<StoredBatch> log = logs.get(tp);
        long base = leo(log);
        int pos = batchSet.readerIndex();
        long next = base;
        while (pos < batchSet.writerIndex()) {
            int size = RecordBatchLayout.LOG_OVERHEAD + batchSet.getInt(pos + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            int count = batchSet.getInt(pos + RecordBatchLayout.RECORD_COUNT_OFFSET);
            byte[] bytes = new byte[size];
            batchSet.getBytes(pos, bytes);
            log.add(new StoredBatch(next, count, bytes));
            next += count;
            pos += size;
        }
        return base;
    }

    synchronized List<StoredBatch> log(TopicPartition tp) {
        return List.copyOf(logs.get(tp));
    }

    private static long leo(List<StoredBatch> log) {
        if (log.isEmpty()) {
            return 0;
        }
        StoredBatch last = log.get(log.size() - 1);
        return last.baseOffset() + last.recordCount();
    }

    private void handle(ChannelHandlerContext ctx, ByteBuf frame) {
        RequestHeader h = RequestHeader.read(frame);
        correlationIds.add(h.correlationId());
        if (h.apiKey() == ApiKeys.PRODUCE) {
            produceVersions.add(h.apiVersion());
        }
        ByteBuf body = Unpooled.buffer();
        Consumer<ByteBuf> writer;
        synchronized (this) {
            writer = switch (h.apiKey()) {
                case ApiKeys.API_VERSIONS -> apiVersions();
                case ApiKeys.METADATA -> metadata(MetadataRequest.read(frame));
                case ApiKeys.PRODUCE -> produce(ProduceRequest.read(frame, h.apiVersion()));
                case ApiKeys.FETCH -> fetch(FetchRequest.read(frame));
                case ApiKeys.LIST_OFFSETS -> listOffsets(ListOffsetsRequest.read(frame));
                case ApiKeys.CREATE_TOPIC -> createTopic(CreateTopicRequest.read(frame));
                case ApiKeys.INIT_PRODUCER_ID -> initProducerId(InitProducerIdRequest.read(frame, h.apiVersion()));
                case ApiKeys.FIND_COORDINATOR, ApiKeys.BEGIN_TRANSACTION, ApiKeys.END_TRANSACTION ->
                    transactionCoordinator ? transactionCall(h, frame) : extraApi(h, frame);
                default -> extraApi(h, frame);
            };
        }
        writer.accept(body);
        ByteBuf out = ctx.alloc().buffer(16 + body.readableBytes());
        out.writeInt(ResponseHeader.SIZE + body.readableBytes());
        ResponseHeader.of(h.correlationId(), Errors.NONE).write(out);
        out.writeBytes(body);
        body.release();
        Runnable send = () -> ctx.writeAndFlush(out);
        synchronized (this) {
            if (h.apiKey() == ApiKeys.PRODUCE && gateProduceResponses) {
                gated.add(send);
                heldProduceResponses.release();
                return;
            }
            if (h.apiKey() == ApiKeys.PRODUCE && dropProduceResponses > 0) {
                dropProduceResponses--;
                out.release();
                ctx.close();
                return;
            }
            if (holdCount > 0 && (holdApiKey < 0 ? h.apiKey() != ApiKeys.API_VERSIONS : h.apiKey() == holdApiKey)) {
                held.add(send);
                if (held.size() == holdCount) {
                    holdCount = 0;
                    for (int i = held.size() - 1; i >= 0; i--) {
                        held.get(i).run();
                    }
                    held.clear();
                }
                return;
            }
        }
        send.run();
    }

    private Consumer<ByteBuf> extraApi(RequestHeader h, ByteBuf frame) {
        if (extraApis == null) {
            throw new IllegalStateException("unexpected api " + h.apiKey());
        }
        return extraApis.handle(h, frame);
    }

    /** FindCoordinator (this broker), BeginTransaction v1 or EndTransaction v2 of {@link #transactionCoordinator}. */
    private Consumer<ByteBuf> transactionCall(RequestHeader h, ByteBuf frame) {
        if (h.apiKey() == ApiKeys.FIND_COORDINATOR) {
            return new FindCoordinatorResponse(Errors.NONE, 0, "127.0.0.1", port())::write;
        }
        if (h.apiKey() == ApiKeys.BEGIN_TRANSACTION) {
            BeginTransactionRequest req = BeginTransactionRequest.read(frame);
            TransactionResponse r = new TransactionResponse(
                    Errors.NONE, req.producerId(), req.producerEpoch(), "ONGOING", nextTransactionSequence++);
            return out -> r.write(out, true);
        }
        EndTransactionRequest req = EndTransactionRequest.read(frame, h.apiVersion());
        events.add(req.commit() ? "end commit" : "end abort");
        return new TransactionResponse(
                Errors.NONE, req.producerId(), req.producerEpoch(), req.commit() ? "COMMITTED" : "ABORTED")::write;
    }

    private Consumer<ByteBuf> apiVersions() {
        List<ApiVersionsResponse.ApiVersionRange> ranges = new ArrayList<>();
        boolean txn = transactionCoordinator;
        for (short k : offersInitProducerId ? new short[] {0, 1, 2, 3, 4, 11, 50} : new short[] {0, 1, 2, 3, 4, 50}) {
            short max = 0;
            if (k == ApiKeys.PRODUCE) {
                max = txn
                        ? (short) Math.max(produceMaxVersion, ProduceRequest.VERSION_WITH_TXN_SEQUENCE)
                        : produceMaxVersion;
            } else if (k == ApiKeys.INIT_PRODUCER_ID && txn) {
                max = InitProducerIdRequest.VERSION_WITH_TIMEOUT;
            }
            ranges.add(new ApiVersionsResponse.ApiVersionRange(k, (short) 0, max));
        }
        if (txn) {
            ranges.add(new ApiVersionsResponse.ApiVersionRange(ApiKeys.FIND_COORDINATOR, (short) 0, (short) 1));
            ranges.add(new ApiVersionsResponse.ApiVersionRange(ApiKeys.BEGIN_TRANSACTION, (short) 0, (short) 1));
            ranges.add(new ApiVersionsResponse.ApiVersionRange(
                    ApiKeys.END_TRANSACTION, (short) 0, EndTransactionRequest.VERSION_IMPLICIT_BEGIN));
        }
        extraApiVersions.forEach((k, max) -> ranges.add(new ApiVersionsResponse.ApiVersionRange(k, (short) 0, max)));
        return new ApiVersionsResponse(ranges, "fake-broker", "0", List.of())::write;
    }

    private Consumer<ByteBuf> metadata(MetadataRequest req) {
        metadataRequests.incrementAndGet();
        List<String> names = req.topics().isEmpty() ? new ArrayList<>(topics.keySet()) : req.topics();
        List<MetadataResponse.TopicMetadata> out = new ArrayList<>();
        for (String t : names) {
            Integer n = topics.get(t);
            List<MetadataResponse.PartitionMetadata> parts = new ArrayList<>();
            for (int p = 0; n != null && p < n; p++) {
                int leader = leaderless.contains(new TopicPartition(t, p)) ? -1 : 0;
                parts.add(new MetadataResponse.PartitionMetadata(
                        Errors.NONE, p, leader, 0, List.of(0), List.of(0), List.of()));
            }
            out.add(new MetadataResponse.TopicMetadata(
                    n == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.NONE, t, false, parts, 0));
        }
        List<MetadataResponse.Broker> brokers = new ArrayList<>();
        brokers.add(new MetadataResponse.Broker(0, "127.0.0.1", port(), null));
        for (int i = 0; i < otherBrokers.size(); i++) {
            HostPort other = otherBrokers.get(i);
            brokers.add(new MetadataResponse.Broker(i + 1, other.host(), other.port(), null));
        }
        return new MetadataResponse("fake", 0, brokers, out, 0)::write;
    }

    private Consumer<ByteBuf> produce(ProduceRequest req) {
        produceRequests.incrementAndGet();
        List<ProduceResponse.TopicResponse> out = new ArrayList<>();
        for (ProduceRequest.TopicData t : req.topicData()) {
            List<ProduceResponse.PartitionResponse> parts = new ArrayList<>();
            for (ProduceRequest.PartitionData p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                events.add("produce " + tp);
                ArrayDeque<Short> errs = produceErrors.get(tp);
                Short injected = errs == null ? null : errs.poll();
                short code = injected != null ? injected : validate(p.records());
                if (code == Errors.NONE && largestBatchRecords(p.records()) > maxBatchRecords) {
                    tooLargeAnswers.incrementAndGet();
                    code = Errors.MESSAGE_TOO_LARGE;
                }
                if (code == Errors.NONE && !logs.containsKey(tp)) {
                    code = Errors.UNKNOWN_TOPIC_OR_PARTITION;
                }
                long base = -1;
                long duplicateOf = -1;
                if (code == Errors.NONE) {
                    long[] seq = checkSequence(tp, p.records());
                    code = (short) seq[0];
                    duplicateOf = seq[1];
                }
                if (code == Errors.NONE && duplicateOf >= 0) {
                    base = duplicateOf;
                } else if (code == Errors.NONE) {
                    produces.add(new ProduceSeen(
                            t.topic(),
                            p.partition(),
                            RecordBatchValidator.batchCount(p.records()),
                            RecordBatchValidator.totalRecordCount(p.records())));
                    base = append(tp, p.records());
                    recordAppend(tp, p.records(), base);
                }
                parts.add(new ProduceResponse.PartitionResponse(p.partition(), code, base, 0, -1, 0));
            }
            out.add(new ProduceResponse.TopicResponse(t.topic(), parts));
        }
        return new ProduceResponse(out)::write;
    }

    /**
     * The spec's produce validation; a set holding a compressed batch (decision 9.o) is instead
     * decoded whole through {@link RecordBatchReader} with a decompressor (framing, CRC, the records
     * inside the stream), as a broker that accepts compression would.
     */
    private static short validate(ByteBuf records) {
        boolean compressed = false;
        for (int pos = records.readerIndex(); pos + RecordBatchLayout.RECORDS_OFFSET <= records.writerIndex(); ) {
            compressed |= (RecordBatchLayout.attributes(records, pos) & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0;
            pos += RecordBatchLayout.LOG_OVERHEAD + Math.max(0, RecordBatchLayout.batchLength(records, pos));
        }
        if (!compressed) {
            return RecordBatchValidator.validate(records, 1 << 20);
        }
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(64 << 20)) {
            RecordBatchReader.decode(records, 0, true, d, (o, ts, k, v, h) -> {});
            return Errors.NONE;
        } catch (ProtocolException e) {
            return e.errorCode();
        }
    }

    private static int largestBatchRecords(ByteBuf records) {
        int most = 0;
        for (int pos = records.readerIndex();
                pos < records.writerIndex();
                pos += RecordBatchLayout.batchSize(records, pos)) {
            most = Math.max(most, RecordBatchLayout.recordCount(records, pos));
        }
        return most;
    }

    private Consumer<ByteBuf> initProducerId(InitProducerIdRequest req) {
        initProducerIdRequests.incrementAndGet();
        if (req.transactionalId() != null && !transactionCoordinator) {
            return InitProducerIdResponse.error(Errors.FEATURE_NOT_ENABLED)::write;
        }
        if (req.transactionalId() != null) {
            long[] idAndEpoch = transactionalIds.get(req.transactionalId());
            if (idAndEpoch == null) {
                idAndEpoch = new long[] {nextProducerId++, 0};
                transactionalIds.put(req.transactionalId(), idAndEpoch);
            } else {
                idAndEpoch[1]++; // a new epoch, as a coordinator fences the older instance
            }
            return new InitProducerIdResponse(Errors.NONE, idAndEpoch[0], (short) idAndEpoch[1])::write;
        }
        Short injected = initProducerIdErrors.poll();
        if (injected != null) {
            return InitProducerIdResponse.error(injected)::write;
        }
        return new InitProducerIdResponse(Errors.NONE, nextProducerId++, (short) 0)::write;
    }

    /**
     * The sequence check of an idempotent batch: {NONE, -1} to append (or no producer id), {NONE,
     * offset} for an exact retry of a recent batch, {OUT_OF_ORDER_SEQUENCE_NUMBER, -1} otherwise.
     */
    private long[] checkSequence(TopicPartition tp, ByteBuf records) {
        int at = records.readerIndex();
        long pid = RecordBatchLayout.producerId(records, at);
        if (pid < 0) {
            return new long[] {Errors.NONE, -1};
        }
        int baseSequence = RecordBatchLayout.baseSequence(records, at);
        int count = RecordBatchLayout.recordCount(records, at);
        sequencesSeen.add(new long[] {pid, baseSequence});
        ArrayDeque<Appended> recent =
                producerState.computeIfAbsent(tp, k -> new HashMap<>()).get(pid);
        for (Appended a : recent == null ? new ArrayDeque<Appended>() : recent) {
            if (a.baseSequence() == baseSequence && a.recordCount() == count) {
                return new long[] {Errors.NONE, a.baseOffset()};
            }
        }
        int expected = recent == null || recent.isEmpty()
                ? 0
                : recent.peekLast().baseSequence() + recent.peekLast().recordCount();
        if (baseSequence != expected) {
            outOfOrderAnswers.incrementAndGet();
            return new long[] {Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1};
        }
        return new long[] {Errors.NONE, -1};
    }

    private void recordAppend(TopicPartition tp, ByteBuf records, long baseOffset) {
        int at = records.readerIndex();
        long pid = RecordBatchLayout.producerId(records, at);
        if (pid < 0) {
            return;
        }
        ArrayDeque<Appended> recent =
                producerState.computeIfAbsent(tp, k -> new HashMap<>()).computeIfAbsent(pid, k -> new ArrayDeque<>());
        recent.addLast(new Appended(
                RecordBatchLayout.baseSequence(records, at), RecordBatchLayout.recordCount(records, at), baseOffset));
        if (recent.size() > 5) {
            recent.pollFirst();
        }
    }

    private Consumer<ByteBuf> fetch(FetchRequest req) {
        List<FetchResponse.FetchableTopicResponse> out = new ArrayList<>();
        for (FetchRequest.FetchTopic t : req.topicPartitions()) {
            List<FetchResponse.PartitionData> parts = new ArrayList<>();
            for (FetchRequest.FetchPartition p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                List<StoredBatch> log = logs.get(tp);
                if (log == null) {
                    parts.add(new FetchResponse.PartitionData(
                            p.partition(),
                            Errors.UNKNOWN_TOPIC_OR_PARTITION,
                            -1,
                            -1,
                            -1,
                            List.of(),
                            Unpooled.EMPTY_BUFFER));
                    continue;
                }
                ByteBuf records = Unpooled.buffer();
                for (StoredBatch b : log) {
                    if (b.baseOffset() + b.recordCount() - 1 >= p.fetchOffset()
                            && records.readableBytes() < p.partitionMaxBytes()) {
                        int at = records.writerIndex();
                        records.writeBytes(b.bytes());
                        records.setInt(at, (int) (b.baseOffset() - p.fetchOffset()));
                    }
                }
                long hw = leo(log);
                parts.add(new FetchResponse.PartitionData(p.partition(), Errors.NONE, hw, 0, hw, List.of(), records));
            }
            out.add(new FetchResponse.FetchableTopicResponse(t.topic(), parts));
        }
        FetchResponse resp = new FetchResponse(0, out);
        boolean empty = out.stream()
                .flatMap(t -> t.partitions().stream())
                .allMatch(p -> p.records().readableBytes() == 0);
        if (empty) {
            // Emulate a short long-poll so an idle consumer does not spin.
            try {
                TimeUnit.MILLISECONDS.sleep(Math.min(req.maxWaitMs(), 20));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return resp::write;
    }

    private Consumer<ByteBuf> listOffsets(ListOffsetsRequest req) {
        List<ListOffsetsResponse.ListOffsetsTopicResponse> out = new ArrayList<>();
        for (ListOffsetsRequest.ListOffsetsTopic t : req.topics()) {
            List<ListOffsetsResponse.ListOffsetsPartitionResponse> parts = new ArrayList<>();
            for (ListOffsetsRequest.ListOffsetsPartition p : t.partitions()) {
                List<StoredBatch> log = logs.get(new TopicPartition(t.topic(), p.partition()));
                long offset = p.timestamp() == -2 ? 0 : leo(log);
                parts.add(new ListOffsetsResponse.ListOffsetsPartitionResponse(
                        p.partition(), Errors.NONE, 0, -1, offset, List.of(offset)));
            }
            out.add(new ListOffsetsResponse.ListOffsetsTopicResponse(t.topic(), parts));
        }
        return new ListOffsetsResponse(out)::write;
    }

    private Consumer<ByteBuf> createTopic(CreateTopicRequest req) {
        createTopic(req.topic(), req.partitionCount());
        List<CreateTopicResponse.CreateTopicPartition> parts = new ArrayList<>();
        for (int p = 0; p < req.partitionCount(); p++) {
            parts.add(new CreateTopicResponse.CreateTopicPartition(p, Errors.NONE, 0));
        }
        return new CreateTopicResponse(req.topic(), parts)::write;
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        accepted.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
