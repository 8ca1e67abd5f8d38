package io.stellflow.protocol.fuzz;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiMessage;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.DeleteRecordsRequest;
import io.stellflow.protocol.message.DeleteRecordsResponse;
import io.stellflow.protocol.message.DescribeBrokerConfigsRequest;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse;
import io.stellflow.protocol.message.DescribeControllersResponse;
import io.stellflow.protocol.message.DescribeLogDirsRequest;
import io.stellflow.protocol.message.DescribeLogDirsResponse;
import io.stellflow.protocol.message.DescribeProducersRequest;
import io.stellflow.protocol.message.DescribeProducersResponse;
import io.stellflow.protocol.message.DescribeTransactionsRequest;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.message.ForwardStatusRequest;
import io.stellflow.protocol.message.ForwardStatusResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsResponse;
import io.stellflow.protocol.message.ListTransactionsRequest;
import io.stellflow.protocol.message.ListTransactionsResponse;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.RegisterTxnPartitionRequest;
import io.stellflow.protocol.message.RegisterTxnPartitionResponse;
import io.stellflow.protocol.message.TopicPartitions;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import io.stellflow.protocol.message.WriteTxnMarkersRequest;
import io.stellflow.protocol.message.WriteTxnMarkersResponse;
import io.stellflow.protocol.record.Header;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.GoldenVectors;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The seed corpora of the protocol fuzz targets, made from VALID inputs: the golden vectors of
 * {@code docs/spec/wire-protocol.md} §10, the worked examples of {@code
 * docs/protocol-additions.md}, and real encodings of typical messages (the group codecs' in
 * {@link GroupSeedFiles}) and record batches (several
 * topics and partitions, nulls, empty arrays, non-ASCII strings, headers, idempotent,
 * transactional, compacted and compressed-flag batches). Committed under {@code
 * src/test/resources/io/stellflow/protocol/fuzz/} where Jazzer and {@link ShortRun} read them;
 * {@code SeedFilesTest} checks the files are these bytes and rewrites them with {@code
 * -Dstellflow.fuzz.writeSeeds=true}.
 *
 * <p>Every input starts with the buffer selector byte ({@link FuzzBuffers#fromInput}); record set
 * inputs then have their flags byte ({@link RecordSetTarget}).
 */
public final class SeedFiles {
    static final long TS = 1_746_768_000_000L;

    private SeedFiles() {}

    /** Corpus directory (relative to this package) to file name to bytes. */
    public static Map<String, Map<String, byte[]>> all() {
        Map<String, Map<String, byte[]>> all = new LinkedHashMap<>();
        all.put("RequestHeaderFuzzTestInputs/requestHeader", requestHeaders());
        for (BodyCodec codec : BodyCodec.values()) {
            Map<String, byte[]> files = new LinkedHashMap<>();
            List<byte[]> bodies = bodies(codec);
            for (int i = 0; i < bodies.size(); i++) {
                files.put(String.format("seed-%02d", i), withSelector(0, bodies.get(i)));
            }
            all.put("BodyCodecFuzzTestInputs/" + codec.methodName(), files);
        }
        all.put("RecordSetFuzzTestInputs/recordSet", recordSets());
        all.put("FrameDecoderFuzzTestInputs/frameDecoder", frameStreams());
        return all;
    }

    private static byte[] withSelector(int selector, byte[] content) {
        byte[] out = new byte[content.length + 1];
        out[0] = (byte) selector;
        System.arraycopy(content, 0, out, 1, content.length);
        return out;
    }

    private static byte[] hex(String hex) {
        return ByteBufUtil.decodeHexDump(hex);
    }

    /** A frame's payload: the hex minus its 4-byte length prefix. */
    private static byte[] payload(String frameHex) {
        return hex(frameHex.substring(8));
    }

    private static byte[] encode(ApiMessage m) {
        ByteBuf out = Unpooled.buffer();
        try {
            m.write(out);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static Map<String, byte[]> requestHeaders() {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("g1-api-versions", withSelector(0, payload(GoldenVectors.G1)));
        files.put("g3-produce", withSelector(1, payload(GoldenVectors.G3)));
        files.put("g4-fetch", withSelector(3, payload(GoldenVectors.G4)));
        files.put("g5-response", withSelector(0, payload(GoldenVectors.G5)));
        byte[] v0 = payload(GoldenVectors.G1);
        v0[5] = 0;
        files.put("header-version-0", withSelector(0, v0));
        byte[] v1 = payload(GoldenVectors.G1);
        v1[5] = 1;
        files.put("header-version-1", withSelector(2, v1));
        files.put("minimal-28-bytes", withSelector(0, header(RequestHeader.of((short) 1, (short) 0, 7, null))));
        RequestHeader full = new RequestHeader(
                (short) 3,
                (short) 1,
                RequestHeader.HEADER_VERSION,
                -5,
                "stellflow-java-sdk-consumer",
                "4bf92f3577b34da6a3ce929d0e0e4736",
                "00f067aa0ba902b7",
                (byte) 1,
                "tenant-é",
                "quota-中",
                "auth-\uD83D\uDE00",
                RequestHeader.TRAFFIC_CLASS_CONTROL,
                "",
                (short) 0x7FFF);
        files.put("all-fields", withSelector(0, header(full)));
        files.put("ten-bytes", withSelector(0, Arrays.copyOf(payload(GoldenVectors.G1), 10)));
        return files;
    }

    private static byte[] header(RequestHeader h) {
        ByteBuf out = Unpooled.buffer();
        try {
            h.write(out);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A request frame's body: the payload after its request header. */
    private static byte[] requestBody(String frameHex) {
        ByteBuf payload = Unpooled.wrappedBuffer(payload(frameHex));
        RequestHeader.read(payload);
        return ByteBufUtil.getBytes(payload);
    }

    private static byte[] responseBody(String frameHex) {
        return Arrays.copyOfRange(payload(frameHex), 12, payload(frameHex).length);
    }

    static List<byte[]> bodies(BodyCodec codec) {
        List<byte[]> b = new ArrayList<>();
        switch (codec) {
            case API_VERSIONS_REQUEST -> {
                b.add(requestBody(GoldenVectors.G1));
                b.add(encode(new ApiVersionsRequest(null, "", List.of())));
                b.add(encode(new ApiVersionsRequest("stellflow-é", "0.1", List.of("a", "中", ""))));
            }
            case API_VERSIONS_RESPONSE -> {
                List<ApiVersionsResponse.ApiVersionRange> ranges = new ArrayList<>();
                for (short key : new short[] {0, 1, 2, 3, 4, 50, 51, 100}) {
                    ranges.add(new ApiVersionsResponse.ApiVersionRange(key, (short) 0, (short) (key == 3 ? 1 : 0)));
                }
                b.add(encode(new ApiVersionsResponse(ranges, "stellflow", "0.1.0", List.of("fetch-v1"))));
                b.add(encode(new ApiVersionsResponse(List.of(), null, null, List.of())));
            }
            case METADATA_REQUEST -> {
                b.add(encode(new MetadataRequest(List.of(), false, false, false)));
                b.add(encode(new MetadataRequest(List.of("orders", "pay-é"), true, false, true)));
            }
            case METADATA_RESPONSE -> {
                b.add(encode(metadataResponse()));
                b.add(encode(new MetadataResponse(null, -1, List.of(), List.of(), 0)));
            }
            case PRODUCE_REQUEST -> {
                b.add(requestBody(GoldenVectors.G3));
                b.add(encode(produceRequest()));
            }
            case PRODUCE_RESPONSE -> {
                b.add(responseBody(GoldenVectors.G6));
                b.add(encode(new ProduceResponse(List.of(
                        new ProduceResponse.TopicResponse(
                                "orders",
                                List.of(
                                        new ProduceResponse.PartitionResponse(0, (short) 0, 100, 3, -1, 0),
                                        new ProduceResponse.PartitionResponse(1, (short) 14, -1, -1, -1, -1))),
                        new ProduceResponse.TopicResponse("pay", List.of())))));
            }
            case FETCH_REQUEST -> {
                b.add(requestBody(GoldenVectors.G4));
                b.add(encode(new FetchRequest(
                        2,
                        500,
                        1,
                        1 << 20,
                        (byte) 1,
                        0,
                        List.of(
                                new FetchRequest.FetchTopic(
                                        "orders",
                                        List.of(
                                                new FetchRequest.FetchPartition(0, 3, 120, 0, 1 << 20),
                                                new FetchRequest.FetchPartition(1, -1, 0, -1, 4096))),
                                new FetchRequest.FetchTopic(
                                        "pay", List.of(new FetchRequest.FetchPartition(7, 0, 5, 5, 1)))))));
            }
            case FETCH_REQUEST_V2 -> {
                // the worked example of docs/protocol-additions.md: follower 2 at broker epoch 300,
                // "orders"-0 from offset 120 at leader epoch 3
                b.add(hex("00000002" + "000000000000012c" + "000001f4" + "00000001" + "00100000" + "00" + "00000000"
                        + "00000001" + "0006" + "6f7264657273" + "00000001" + "00000000" + "00000003"
                        + "0000000000000078" + "0000000000000000" + "00100000"));
                b.add(GroupSeedFiles.bytes(out -> new FetchRequest(
                                -1,
                                0,
                                0,
                                1,
                                (byte) 1,
                                7,
                                List.of(new FetchRequest.FetchTopic(
                                        "pay-é", List.of(new FetchRequest.FetchPartition(7, -1, 5, -1, 1)))))
                        .write(out, FetchRequest.VERSION_REPLICA_EPOCH)));
            }
            case FETCH_RESPONSE_V0 -> {
                b.add(responseBody(GoldenVectors.G7));
                b.add(encode(fetchResponseV0()));
            }
            case FETCH_RESPONSE_V1 -> b.add(encode(fetchResponseV1()));
            case LIST_OFFSETS_REQUEST ->
                b.add(encode(new ListOffsetsRequest(
                        -1,
                        (byte) 0,
                        List.of(
                                new ListOffsetsRequest.ListOffsetsTopic(
                                        "orders",
                                        List.of(
                                                new ListOffsetsRequest.ListOffsetsPartition(
                                                        0, -1, ListOffsetsRequest.EARLIEST_TIMESTAMP, 1),
                                                new ListOffsetsRequest.ListOffsetsPartition(
                                                        1, 4, ListOffsetsRequest.LATEST_TIMESTAMP, 1),
                                                new ListOffsetsRequest.ListOffsetsPartition(2, 4, TS, 3))),
                                new ListOffsetsRequest.ListOffsetsTopic("empty", List.of())))));
            case LIST_OFFSETS_RESPONSE ->
                b.add(encode(new ListOffsetsResponse(List.of(new ListOffsetsResponse.ListOffsetsTopicResponse(
                        "orders",
                        List.of(
                                new ListOffsetsResponse.ListOffsetsPartitionResponse(
                                        0, (short) 0, 4, -1, 0, List.of(0L)),
                                new ListOffsetsResponse.ListOffsetsPartitionResponse(
                                        2, (short) 0, 4, TS, 17, List.of(17L, 18L, 19L)),
                                new ListOffsetsResponse.ListOffsetsPartitionResponse(
                                        9, (short) 10, -1, -1, -1, List.of())))))));
            case CREATE_TOPIC_REQUEST_V0 -> {
                b.add(encode(CreateTopicRequest.of("orders", 3)));
                b.add(encode(new CreateTopicRequest("pay-é", 1, 0, 1, 2, List.of(1, 2, 3), List.of(1, 2))));
            }
            case CREATE_TOPIC_REQUEST_V1 -> {
                ByteBuf out = Unpooled.buffer();
                CreateTopicRequest.of("orders", 3, (short) 2).write(out, (short) 1);
                b.add(ByteBufUtil.getBytes(out));
                out.release();
            }
            case CREATE_TOPIC_RESPONSE_V0 -> {
                b.add(encode(new CreateTopicResponse(
                        "orders",
                        List.of(
                                new CreateTopicResponse.CreateTopicPartition(0, (short) 0, 0),
                                new CreateTopicResponse.CreateTopicPartition(1, (short) 0, 0),
                                new CreateTopicResponse.CreateTopicPartition(2, (short) 0, 0)))));
                b.add(encode(new CreateTopicResponse(
                        "orders", List.of(new CreateTopicResponse.CreateTopicPartition(-1, (short) 3, -1)))));
            }
            case CREATE_TOPIC_RESPONSE_V2 -> {
                for (String message : new String[] {"topic orders already exists", null}) {
                    ByteBuf out = Unpooled.buffer();
                    new CreateTopicResponse(
                                    "orders",
                                    List.of(new CreateTopicResponse.CreateTopicPartition(-1, (short) 29, -1)),
                                    message)
                            .write(out, (short) 2);
                    b.add(ByteBufUtil.getBytes(out));
                    out.release();
                }
            }
            case OFFSET_FOR_LEADER_EPOCH_REQUEST -> {
                b.add(hex("00000002" + "00000001" + "0006" + "6f7264657273" + "00000001" + "00000000" + "00000005"
                        + "00000003"));
                b.add(encode(new OffsetForLeaderEpochRequest(
                        -1,
                        List.of(
                                new OffsetForLeaderEpochRequest.Topic(
                                        "orders",
                                        List.of(
                                                new OffsetForLeaderEpochRequest.PartitionEpoch(0, -1, 0),
                                                new OffsetForLeaderEpochRequest.PartitionEpoch(1, 7, 6))),
                                new OffsetForLeaderEpochRequest.Topic(
                                        "pay", List.of(new OffsetForLeaderEpochRequest.PartitionEpoch(3, 1, 1)))))));
            }
            case OFFSET_FOR_LEADER_EPOCH_RESPONSE -> {
                b.add(hex("00000001" + "0006" + "6f7264657273" + "00000001" + "00000000" + "0000" + "00000003"
                        + "0000000000000078"));
                b.add(encode(new OffsetForLeaderEpochResponse(List.of(new OffsetForLeaderEpochResponse.Topic(
                        "orders",
                        List.of(
                                new OffsetForLeaderEpochResponse.EpochEndOffset(0, (short) 0, 5, 1200),
                                OffsetForLeaderEpochResponse.EpochEndOffset.error(1, (short) 40)))))));
            }
            case DESCRIBE_LOG_DIRS_REQUEST -> {
                b.add(hex("00000001" + "0001" + "74"));
                b.add(encode(new DescribeLogDirsRequest(null)));
                b.add(encode(new DescribeLogDirsRequest(List.of("orders", "pay-é", ""))));
            }
            case DESCRIBE_LOG_DIRS_RESPONSE -> {
                b.add(hex("00000001" + "0002" + "2f64" + "0000" + "0000000000001000" + "0000000000000400" + "00000001"
                        + "0001" + "74" + "00000000" + "0000000000000082" + "0000000000000002"));
                b.add(encode(new DescribeLogDirsResponse(List.of(
                        new DescribeLogDirsResponse.LogDir(
                                "/data/a",
                                (short) 0,
                                1L << 40,
                                1L << 39,
                                List.of(
                                        new DescribeLogDirsResponse.PartitionSize("orders", 0, 1 << 20, 1200),
                                        new DescribeLogDirsResponse.PartitionSize("orders", 5, 0, 0))),
                        new DescribeLogDirsResponse.LogDir("/data/b", (short) 7, -1, -1, List.of())))));
            }
            case DESCRIBE_CONTROLLERS_REQUEST -> b.add(new byte[0]);
            case DESCRIBE_CONTROLLERS_RESPONSE -> {
                // errorCode 0, one controller "c1":9094
                b.add(hex("0000" + "00000001" + "0002" + "6331" + "00002386"));
                b.add(encode(new DescribeControllersResponse(
                        (short) 0,
                        List.of(
                                new DescribeControllersResponse.ControllerEndpoint("127.0.0.1", 9094),
                                new DescribeControllersResponse.ControllerEndpoint("ctl-é", 19094)))));
                b.add(encode(new DescribeControllersResponse((short) 15, List.of())));
            }
            case INIT_PRODUCER_ID_REQUEST -> {
                b.add(hex("ffff")); // null transactionalId: an idempotent producer
                b.add(encode(new InitProducerIdRequest("orders-tx")));
            }
            case INIT_PRODUCER_ID_RESPONSE -> {
                b.add(hex("0000" + "00000000000003e8" + "0000")); // producer id 1000, epoch 0
                b.add(encode(InitProducerIdResponse.error(Errors.FEATURE_NOT_ENABLED)));
            }
            case BEGIN_TRANSACTION_REQUEST -> {
                b.add(hex("0002" + "7478" + "00000000000003e8" + "0001")); // "tx", producer 1000, epoch 1
                b.add(encode(new BeginTransactionRequest(null, -1, (short) -1)));
            }
            case END_TRANSACTION_REQUEST -> {
                b.add(hex("0002" + "7478" + "00000000000003e8" + "0001" + "01")); // commit
                b.add(encode(new EndTransactionRequest("orders-tx-é", Long.MAX_VALUE, Short.MAX_VALUE, false)));
            }
            case TRANSACTION_RESPONSE -> {
                b.add(hex("0000" + "00000000000003e8" + "0001" + "0009" + "434f4d4d4954544544")); // COMMITTED
                b.add(encode(
                        new TransactionResponse(Errors.PRODUCER_FENCED, 1000, (short) 1, TransactionResponse.FAILED)));
                b.add(encode(new TransactionResponse((short) 0, 7, (short) 0, null)));
            }
            case REGISTER_TXN_PARTITION_REQUEST -> {
                b.add(hex("0002" + "7478" + "00000000000003e8" + "0001" + "ffffffffffffffff" + "0001" + "74"
                        + "00000000"));
                b.add(encode(new RegisterTxnPartitionRequest("orders-tx", 1000, (short) 3, 42, "orders", 11)));
            }
            case REGISTER_TXN_PARTITION_RESPONSE -> {
                b.add(hex("0000" + "0000000000000003"));
                b.add(encode(new RegisterTxnPartitionResponse(Errors.INVALID_TXN_STATE, -1)));
            }
            case WRITE_TXN_MARKERS_REQUEST -> {
                b.add(hex("00000000000003e8" + "0001" + "01" + "00000002" + "0000000000000003" + "00001388" + "00000001"
                        + "0001" + "74" + "00000000"));
                b.add(encode(new WriteTxnMarkersRequest(
                        1000,
                        (short) 0,
                        false,
                        7,
                        42,
                        30_000,
                        List.of(
                                new WriteTxnMarkersRequest.TopicPartition("orders", 0),
                                new WriteTxnMarkersRequest.TopicPartition("orders", 11)))));
            }
            case WRITE_TXN_MARKERS_RESPONSE -> {
                b.add(hex("00000001" + "0001" + "74" + "00000000" + "0000"));
                b.add(encode(new WriteTxnMarkersResponse(List.of(
                        new WriteTxnMarkersResponse.PartitionResult("orders", 0, Errors.NOT_LEADER_OR_FOLLOWER),
                        new WriteTxnMarkersResponse.PartitionResult("orders", 11, (short) 0)))));
            }
            case LIST_TRANSACTIONS_REQUEST -> {
                b.add(hex("00000001" + "0007" + "4f6e676f696e67" + "00000001" + "00000000000003e8"));
                b.add(encode(new ListTransactionsRequest(List.of(), List.of())));
            }
            case LIST_TRANSACTIONS_RESPONSE -> {
                b.add(hex("0000" + "00000001" + "0002" + "7478" + "00000000000003e8" + "0007" + "4f6e676f696e67"));
                b.add(encode(new ListTransactionsResponse(
                        Errors.COORDINATOR_NOT_AVAILABLE,
                        List.of(new ListTransactionsResponse.ListedTransaction("orders-tx", 2000, "PrepareCommit")))));
            }
            case DESCRIBE_TRANSACTIONS_REQUEST -> {
                b.add(hex("00000001" + "0002" + "7478"));
                b.add(encode(new DescribeTransactionsRequest(List.of("a", "orders-tx"))));
            }
            case DESCRIBE_TRANSACTIONS_RESPONSE -> {
                b.add(hex("00000001" + "0000" + "0002" + "7478" + "0007" + "4f6e676f696e67" + "0000ea60"
                        + "00000000000003e8" + "00000000000003e8" + "0001" + "0000000000000003" + "00000001" + "0001"
                        + "74" + "00000000"));
                b.add(encode(new DescribeTransactionsResponse(List.of(
                        DescribeTransactionsResponse.DescribedTransaction.of(Errors.NOT_COORDINATOR, "x", ""),
                        DescribeTransactionsResponse.DescribedTransaction.of(
                                Errors.NONE, "y", DescribeTransactionsResponse.DEAD)))));
            }
            case DESCRIBE_PRODUCERS_REQUEST -> {
                b.add(hex("00000001" + "0001" + "74" + "00000001" + "00000000"));
                b.add(encode(new DescribeProducersRequest(List.of(new TopicPartitions("orders", List.of(0, 11))))));
            }
            case DESCRIBE_PRODUCERS_RESPONSE -> {
                b.add(hex("00000001" + "0001" + "74" + "00000001" + "00000000" + "0000" + "00000001"
                        + "00000000000003e8" + "0001" + "00000004" + "00000000000007d0" + "ffffffff"
                        + "0000000000000007" + "0000000000000003"));
                b.add(encode(new DescribeProducersResponse(List.of(new DescribeProducersResponse.Topic(
                        "orders",
                        List.of(
                                new DescribeProducersResponse.Partition(0, Errors.NOT_LEADER_OR_FOLLOWER, List.of()),
                                new DescribeProducersResponse.Partition(
                                        11,
                                        Errors.NONE,
                                        List.of(new DescribeProducersResponse.Producer(
                                                5, (short) 0, -1, 0, -1, -1, -1)))))))));
            }
            case FORWARD_STATUS_REQUEST -> {
                b.add(hex("000000000000002a"));
                b.add(encode(new ForwardStatusRequest(Long.MAX_VALUE)));
            }
            case FORWARD_STATUS_RESPONSE -> {
                b.add(hex("0000" + "01"));
                b.add(encode(new ForwardStatusResponse(Errors.NONE, false)));
            }
            case PRODUCE_REQUEST_V2 -> {
                b.add(GroupSeedFiles.bytes(out -> produceRequest().write(out, (short) 2)));
                // the worked example of docs/protocol-additions.md: "tx", transaction 3, acks -1, "t"-0 null
                b.add(hex("0002" + "7478" + "0000000000000003" + "ffff" + "00007530" + "00000001" + "0001" + "74"
                        + "00000001" + "00000000" + "ffffffff"));
            }
            case INIT_PRODUCER_ID_REQUEST_V1 -> {
                b.add(hex("0002" + "7478" + "00007530")); // "tx", 30000 ms
                b.add(GroupSeedFiles.bytes(out -> new InitProducerIdRequest(null, -1).write(out, (short) 1)));
            }
            case END_TRANSACTION_REQUEST_V1 -> {
                b.add(hex("0002" + "7478" + "00000000000003e8" + "0001" + "01" + "0000000000000003"));
                b.add(GroupSeedFiles.bytes(
                        out -> new EndTransactionRequest("orders-tx-é", 5, (short) 0, false, 0).write(out, (short) 1)));
            }
            case BEGIN_TRANSACTION_RESPONSE_V1 -> {
                b.add(hex("0000" + "00000000000003e8" + "0001" + "0007" + "4f4e474f494e47" + "0000000000000003"));
                b.add(GroupSeedFiles.bytes(out -> new TransactionResponse(
                                Errors.PRODUCER_FENCED, 1000, (short) 1, TransactionResponse.FAILED, -1)
                        .write(out, true)));
            }
            case TXN_OFFSET_COMMIT_REQUEST -> {
                // The worked example of docs/protocol-additions.md, then a member's commit of two partitions.
                b.add(hex("0002" + "7478" + "0001" + "67" + "00000000000003e8" + "0001" + "ffffffffffffffff" + "ffff"
                        + "ffffffff" + "00000001" + "0001" + "74" + "00000001" + "00000000" + "0000000000000005"
                        + "ffff"));
                b.add(encode(new TxnOffsetCommitRequest(
                        "orders-tx",
                        "billing",
                        1000,
                        (short) 3,
                        42,
                        "member-1",
                        7,
                        List.of(new OffsetCommitRequest.OffsetCommitTopic(
                                "orders",
                                List.of(
                                        new OffsetCommitRequest.OffsetCommitPartition(0, 17, null),
                                        new OffsetCommitRequest.OffsetCommitPartition(11, 1L << 40, "é")))))));
            }
            case DELETE_RECORDS_REQUEST -> {
                b.add(hex("00000001" + "0001" + "74" + "00000001" + "00000000" + "0000000000000005"));
                b.add(encode(new DeleteRecordsRequest(List.of(new DeleteRecordsRequest.Topic(
                        "orders",
                        List.of(
                                new DeleteRecordsRequest.Partition(0, DeleteRecordsRequest.HIGH_WATERMARK),
                                new DeleteRecordsRequest.Partition(7, 1L << 40)))))));
            }
            case DELETE_RECORDS_RESPONSE -> {
                b.add(hex("00000001" + "0001" + "74" + "00000001" + "00000000" + "0000" + "0000000000000005"));
                b.add(encode(new DeleteRecordsResponse(List.of(new DeleteRecordsResponse.Topic(
                        "orders",
                        List.of(
                                new DeleteRecordsResponse.Partition(0, (short) 0, 1200),
                                new DeleteRecordsResponse.Partition(7, (short) 1, -1)))))));
            }
            case DESCRIBE_BROKER_CONFIGS_REQUEST -> {
                b.add(hex("00000001" + "0001" + "61"));
                b.add(encode(new DescribeBrokerConfigsRequest(null)));
                b.add(encode(new DescribeBrokerConfigsRequest(List.of("min.insync.replicas", "log.dirs"))));
            }
            case DESCRIBE_BROKER_CONFIGS_RESPONSE -> {
                b.add(hex("00000001" + "00000001" + "0001" + "61" + "0001" + "62" + "01"));
                b.add(encode(new DescribeBrokerConfigsResponse(
                        3,
                        List.of(
                                new DescribeBrokerConfigsResponse.Entry("log.dirs", "/data/a,/data/b", (byte) 1),
                                new DescribeBrokerConfigsResponse.Entry("min.insync.replicas", "1", (byte) 0),
                                new DescribeBrokerConfigsResponse.Entry(
                                        "otel.exporter.otlp.headers", null, (byte) 1)))));
            }
            default -> b.addAll(GroupSeedFiles.bodies(codec));
        }
        return b;
    }

    private static MetadataResponse metadataResponse() {
        return new MetadataResponse(
                "cluster-é",
                2,
                List.of(
                        new MetadataResponse.Broker(1, "127.0.0.1", 9092, null),
                        new MetadataResponse.Broker(2, "broker-2.example", 9093, "rack-a")),
                List.of(
                        new MetadataResponse.TopicMetadata(
                                (short) 0,
                                "orders",
                                false,
                                List.of(
                                        new MetadataResponse.PartitionMetadata(
                                                (short) 0, 0, 1, 3, List.of(1, 2), List.of(1, 2), List.of()),
                                        new MetadataResponse.PartitionMetadata(
                                                (short) 0, 1, -1, 3, List.of(2, 1), List.of(), List.of(2))),
                                0),
                        new MetadataResponse.TopicMetadata((short) 10, "missing", false, List.of(), 0)),
                0);
    }

    /** A batch of {@code n} records with keys, values and headers (some null, some non-ASCII). */
    static byte[] batch(int n, boolean headers) {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
            for (int i = 0; i < n; i++) {
                byte[] key = i % 3 == 2 ? null : ("key-" + i).getBytes(UTF_8);
                byte[] value = i % 4 == 3 ? null : ("value-é-" + i).getBytes(UTF_8);
                List<Header> h = headers
                        ? List.of(
                                new Header("trace", ("t" + i).getBytes(UTF_8)),
                                new Header("中", null),
                                new Header(null, new byte[0]))
                        : null;
                b.append(TS + i * 7L, key, value, h);
            }
            b.close();
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static ProduceRequest produceRequest() {
        ByteBuf one = Unpooled.wrappedBuffer(batch(3, true));
        ByteBuf two = Unpooled.wrappedBuffer(concat(batch(1, false), batch(2, false)));
        return new ProduceRequest(
                "tx-1",
                (short) -1,
                30_000,
                List.of(
                        new ProduceRequest.TopicData(
                                "orders",
                                List.of(
                                        new ProduceRequest.PartitionData(0, one),
                                        new ProduceRequest.PartitionData(1, null))),
                        new ProduceRequest.TopicData("pay", List.of(new ProduceRequest.PartitionData(0, two)))));
    }

    private static FetchResponse fetchResponseV0() {
        return new FetchResponse(
                0,
                List.of(new FetchResponse.FetchableTopicResponse(
                        "orders",
                        List.of(
                                new FetchResponse.PartitionData(
                                        0,
                                        (short) 0,
                                        10,
                                        0,
                                        10,
                                        List.of(new FetchResponse.AbortedTransaction(7, 3)),
                                        Unpooled.wrappedBuffer(batch(4, true))),
                                new FetchResponse.PartitionData(
                                        1, (short) 1, -1, -1, -1, List.of(), Unpooled.EMPTY_BUFFER)))));
    }

    private static FetchResponseV1 fetchResponseV1() {
        byte[] stored = hex(GoldenVectors.storedG2(0) + GoldenVectors.storedG2(1));
        return new FetchResponseV1(
                0,
                List.of(new FetchResponseV1.Topic(
                        "orders",
                        List.of(
                                new FetchResponseV1.PartitionData(
                                        0, (short) 0, 102, 0, 102, List.of(), 100, Unpooled.wrappedBuffer(stored)),
                                new FetchResponseV1.PartitionData(
                                        1, (short) 9, -1, -1, -1, List.of(), -1, Unpooled.EMPTY_BUFFER)))));
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuf out = Unpooled.buffer();
        try {
            for (byte[] p : parts) {
                out.writeBytes(p);
            }
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    /** A record set input: selector, flags, set. */
    private static byte[] recordSet(int selector, int flags, byte[] set) {
        byte[] out = new byte[set.length + 2];
        out[0] = (byte) selector;
        out[1] = (byte) flags;
        System.arraycopy(set, 0, out, 2, set.length);
        return out;
    }

    private static Map<String, byte[]> recordSets() {
        Map<String, byte[]> files = new LinkedHashMap<>();
        byte[] g2 = hex(GoldenVectors.G2);
        files.put("g2", recordSet(0, 0, g2));
        files.put("g2-fix-crc", recordSet(1, 8, g2));
        files.put("g7-stored", recordSet(3, 0, hex(GoldenVectors.storedG2(0) + GoldenVectors.storedG2(1))));
        files.put("headers", recordSet(0, 8, batch(5, true)));
        files.put("three-batches", recordSet(2, 8, concat(batch(1, false), batch(4, false), batch(2, true))));
        files.put("size-limit", recordSet(0, 4, batch(12, true)));
        byte[] idempotent = batch(3, false);
        setProducer(idempotent, 7L, (short) 0, 0, 0);
        files.put("idempotent", recordSet(0, 8, idempotent));
        byte[] transactional = batch(2, false);
        setProducer(transactional, 9L, (short) 1, 5, RecordBatchLayout.TRANSACTIONAL_FLAG_MASK);
        files.put("transactional", recordSet(0, 1 | 8, transactional));
        byte[] compressed = batch(2, false);
        setProducer(compressed, -1L, (short) -1, -1, 1);
        files.put("gzip-flag", recordSet(0, 8, compressed));
        files.put("compacted", recordSet(0, 8, compacted(batch(5, false), 1, 4)));
        return files;
    }

    /** A frame decoder input: flags ({@link FrameDecoderTarget}), read-size seed, stream. */
    private static byte[] frameStream(int flags, int reads, byte[] stream) {
        return recordSet(flags, reads, stream);
    }

    private static Map<String, byte[]> frameStreams() {
        Map<String, byte[]> files = new LinkedHashMap<>();
        byte[] g1 = hex(GoldenVectors.G1);
        byte[] g3 = hex(GoldenVectors.G3);
        byte[] g4 = hex(GoldenVectors.G4);
        byte[] requests = concat(g1, g3, g4);
        byte[] responses = concat(hex(GoldenVectors.G5), hex(GoldenVectors.G6), hex(GoldenVectors.G7));
        files.put("requests-one-read", frameStream(6, 0, requests));
        files.put("requests-small-reads", frameStream(6, 3, requests));
        files.put("requests-in-place", frameStream(6 | 8, 17, requests));
        files.put("requests-oversized-64", frameStream(2, 5, requests));
        files.put("requests-oversized-10", frameStream(0, 1, concat(g1, g4)));
        files.put("requests-partial-last", frameStream(4 | 8, 9, Arrays.copyOf(requests, requests.length - 7)));
        files.put("requests-unsyncable", frameStream(6, 2, concat(g1, hex("00000009"), g1)));
        files.put("requests-negative-length", frameStream(6, 0, concat(g1, hex("ffffffff00"))));
        files.put("responses-one-read", frameStream(1, 0, responses));
        files.put("responses-in-place", frameStream(1 | 8, 33, responses));
        files.put("responses-empty-frame", frameStream(1, 1, concat(hex("00000000"), hex(GoldenVectors.G5))));
        files.put("responses-corrupt-length", frameStream(1, 4, concat(hex(GoldenVectors.G5), hex("7fffffff00"))));
        return files;
    }

    private static void setProducer(byte[] batch, long producerId, short epoch, int sequence, int attributes) {
        ByteBuf b = Unpooled.wrappedBuffer(batch);
        b.setShort(RecordBatchLayout.ATTRIBUTES_OFFSET, attributes);
        b.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, producerId);
        b.setShort(RecordBatchLayout.PRODUCER_EPOCH_OFFSET, epoch);
        b.setInt(RecordBatchLayout.BASE_SEQUENCE_OFFSET, sequence);
        b.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(b, 0));
    }

    /** {@code full} (one batch) with only the records at {@code keep}, as compaction stores it. */
    private static byte[] compacted(byte[] full, int... keep) {
        ByteBuf in = Unpooled.wrappedBuffer(full);
        int count = RecordBatchLayout.recordCount(in, 0);
        int[] starts = new int[count + 1];
        int p = RecordBatchLayout.RECORDS_OFFSET;
        for (int i = 0; i < count; i++) {
            starts[i] = p;
            p += RecordBatchLayout.RECORD_LENGTH_SIZE + in.getInt(p);
        }
        starts[count] = p;
        ByteBuf out = Unpooled.buffer();
        try {
            out.writeBytes(in, 0, RecordBatchLayout.RECORDS_OFFSET);
            for (int i : keep) {
                out.writeBytes(in, starts[i], starts[i + 1] - starts[i]);
            }
            out.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, out.writerIndex() - RecordBatchLayout.LOG_OVERHEAD);
            out.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, keep.length);
            out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }
}
