package io.stellflow.protocol.fuzz;

import static io.stellflow.protocol.fuzz.Oracle.check;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.message.ApiMessage;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.DeleteGroupsRequest;
import io.stellflow.protocol.message.DeleteGroupsResponse;
import io.stellflow.protocol.message.DeleteRecordsRequest;
import io.stellflow.protocol.message.DeleteRecordsResponse;
import io.stellflow.protocol.message.DescribeBrokerConfigsRequest;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse;
import io.stellflow.protocol.message.DescribeControllersRequest;
import io.stellflow.protocol.message.DescribeControllersResponse;
import io.stellflow.protocol.message.DescribeGroupsRequest;
import io.stellflow.protocol.message.DescribeGroupsResponse;
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
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.ForwardStatusRequest;
import io.stellflow.protocol.message.ForwardStatusResponse;
import io.stellflow.protocol.message.HeartbeatRequest;
import io.stellflow.protocol.message.HeartbeatResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.ListGroupsRequest;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsResponse;
import io.stellflow.protocol.message.ListTransactionsRequest;
import io.stellflow.protocol.message.ListTransactionsResponse;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.OffsetDeleteResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.protocol.message.OffsetHistoryRequest;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.RegisterTxnPartitionRequest;
import io.stellflow.protocol.message.RegisterTxnPartitionResponse;
import io.stellflow.protocol.message.SyncGroupRequest;
import io.stellflow.protocol.message.SyncGroupResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import io.stellflow.protocol.message.WriteTxnMarkersRequest;
import io.stellflow.protocol.message.WriteTxnMarkersResponse;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Every request and response body codec of {@code protocol/message}, per version with its own
 * layout ({@code docs/spec/wire-protocol.md} §6; OffsetForLeaderEpoch: {@code
 * docs/protocol-additions.md}). Fetch v1 requests are byte-identical to v0, DeleteTopic uses the
 * CreateTopic layouts, CreateTopic response v1 is v0, OffsetCommit response v1 is v0. The group
 * codecs (keys 5-10 and 20-25) have no request-level range check in {@code read}: their ranges
 * are the broker's, so they carry no postconditions.
 *
 * <p>For each: the strict reader, the writer of the same version, whether re-encoding a decoded
 * body must give back exactly its bytes (all but Fetch responses with a null records field, which
 * the writer sends as length 0 by design), and the request-level checks {@code read} promises
 * (spec §6.3-6.5) plus the record sets inside (checked by {@link RecordSetTarget#checkSet}).
 */
public enum BodyCodec {
    API_VERSIONS_REQUEST(ApiVersionsRequest::read, ApiMessage::write),
    API_VERSIONS_RESPONSE(ApiVersionsResponse::read, ApiMessage::write),
    METADATA_REQUEST(MetadataRequest::read, ApiMessage::write),
    METADATA_RESPONSE(MetadataResponse::read, ApiMessage::write),
    PRODUCE_REQUEST(ProduceRequest::read, ApiMessage::write, m -> true, BodyCodec::checkProduce),
    PRODUCE_RESPONSE(ProduceResponse::read, ApiMessage::write),
    FETCH_REQUEST(FetchRequest::read, ApiMessage::write, m -> true, BodyCodec::checkFetchRequest),
    FETCH_REQUEST_V2(
            b -> FetchRequest.read(b, FetchRequest.VERSION_REPLICA_EPOCH),
            (m, out) -> ((FetchRequest) m).write(out, FetchRequest.VERSION_REPLICA_EPOCH),
            m -> true,
            BodyCodec::checkFetchRequest),
    FETCH_RESPONSE_V0(FetchResponse::read, ApiMessage::write, BodyCodec::noNullRecords, BodyCodec::checkFetchV0),
    FETCH_RESPONSE_V1(FetchResponseV1::read, ApiMessage::write, BodyCodec::noNullRecordsV1, BodyCodec::checkFetchV1),
    LIST_OFFSETS_REQUEST(
            ListOffsetsRequest::read,
            ApiMessage::write,
            m -> true,
            m -> check(
                    ((ListOffsetsRequest) m).isolationLevel() == 0 || ((ListOffsetsRequest) m).isolationLevel() == 1,
                    "isolationLevel accepted")),
    LIST_OFFSETS_RESPONSE(ListOffsetsResponse::read, ApiMessage::write),
    CREATE_TOPIC_REQUEST_V0(CreateTopicRequest::read, ApiMessage::write),
    CREATE_TOPIC_REQUEST_V1(
            b -> CreateTopicRequest.read(b, (short) 1), (m, out) -> ((CreateTopicRequest) m).write(out, (short) 1)),
    CREATE_TOPIC_RESPONSE_V0(CreateTopicResponse::read, ApiMessage::write),
    CREATE_TOPIC_RESPONSE_V2(
            b -> CreateTopicResponse.read(b, (short) 2), (m, out) -> ((CreateTopicResponse) m).write(out, (short) 2)),
    OFFSET_FOR_LEADER_EPOCH_REQUEST(
            OffsetForLeaderEpochRequest::read, ApiMessage::write, m -> true, BodyCodec::checkEpochRequest),
    OFFSET_FOR_LEADER_EPOCH_RESPONSE(OffsetForLeaderEpochResponse::read, ApiMessage::write),
    OFFSET_COMMIT_REQUEST_V0(OffsetCommitRequest::read, ApiMessage::write),
    OFFSET_COMMIT_REQUEST_V1(
            b -> OffsetCommitRequest.read(b, (short) 1), (m, out) -> ((OffsetCommitRequest) m).write(out, (short) 1)),
    OFFSET_COMMIT_RESPONSE(OffsetCommitResponse::read, ApiMessage::write),
    OFFSET_FETCH_REQUEST_V0(OffsetFetchRequest::read, ApiMessage::write),
    OFFSET_FETCH_REQUEST_V1(
            b -> OffsetFetchRequest.read(b, (short) 1), (m, out) -> ((OffsetFetchRequest) m).write(out, (short) 1)),
    OFFSET_FETCH_RESPONSE_V0(OffsetFetchResponse::read, ApiMessage::write),
    OFFSET_FETCH_RESPONSE_V1(
            b -> OffsetFetchResponse.read(b, (short) 1), (m, out) -> ((OffsetFetchResponse) m).write(out, (short) 1)),
    FIND_COORDINATOR_REQUEST(FindCoordinatorRequest::read, ApiMessage::write),
    FIND_COORDINATOR_RESPONSE(FindCoordinatorResponse::read, ApiMessage::write),
    HEARTBEAT_REQUEST(HeartbeatRequest::read, ApiMessage::write),
    HEARTBEAT_RESPONSE(HeartbeatResponse::read, ApiMessage::write),
    JOIN_GROUP_REQUEST(JoinGroupRequest::read, ApiMessage::write),
    JOIN_GROUP_RESPONSE(JoinGroupResponse::read, ApiMessage::write),
    SYNC_GROUP_REQUEST(SyncGroupRequest::read, ApiMessage::write),
    SYNC_GROUP_RESPONSE(SyncGroupResponse::read, ApiMessage::write),
    CONSUMER_GROUP_HEARTBEAT_REQUEST(ConsumerGroupHeartbeatRequest::read, ApiMessage::write),
    CONSUMER_GROUP_HEARTBEAT_RESPONSE(ConsumerGroupHeartbeatResponse::read, ApiMessage::write),
    LIST_GROUPS_REQUEST(ListGroupsRequest::read, ApiMessage::write),
    LIST_GROUPS_RESPONSE(ListGroupsResponse::read, ApiMessage::write),
    DESCRIBE_GROUPS_REQUEST(DescribeGroupsRequest::read, ApiMessage::write),
    DESCRIBE_GROUPS_RESPONSE(DescribeGroupsResponse::read, ApiMessage::write),
    DELETE_GROUPS_REQUEST(DeleteGroupsRequest::read, ApiMessage::write),
    DELETE_GROUPS_RESPONSE(DeleteGroupsResponse::read, ApiMessage::write),
    OFFSET_DELETE_REQUEST(OffsetDeleteRequest::read, ApiMessage::write),
    OFFSET_DELETE_RESPONSE(OffsetDeleteResponse::read, ApiMessage::write),
    OFFSET_HISTORY_REQUEST(OffsetHistoryRequest::read, ApiMessage::write),
    OFFSET_HISTORY_RESPONSE(OffsetHistoryResponse::read, ApiMessage::write),
    DESCRIBE_LOG_DIRS_REQUEST(DescribeLogDirsRequest::read, ApiMessage::write),
    DESCRIBE_LOG_DIRS_RESPONSE(DescribeLogDirsResponse::read, ApiMessage::write),
    DELETE_RECORDS_REQUEST(DeleteRecordsRequest::read, ApiMessage::write),
    DELETE_RECORDS_RESPONSE(DeleteRecordsResponse::read, ApiMessage::write),
    DESCRIBE_BROKER_CONFIGS_REQUEST(DescribeBrokerConfigsRequest::read, ApiMessage::write),
    DESCRIBE_BROKER_CONFIGS_RESPONSE(DescribeBrokerConfigsResponse::read, ApiMessage::write),
    DESCRIBE_CONTROLLERS_REQUEST(DescribeControllersRequest::read, ApiMessage::write),
    DESCRIBE_CONTROLLERS_RESPONSE(DescribeControllersResponse::read, ApiMessage::write),
    INIT_PRODUCER_ID_REQUEST(InitProducerIdRequest::read, ApiMessage::write),
    INIT_PRODUCER_ID_RESPONSE(InitProducerIdResponse::read, ApiMessage::write),
    BEGIN_TRANSACTION_REQUEST(BeginTransactionRequest::read, ApiMessage::write),
    END_TRANSACTION_REQUEST(EndTransactionRequest::read, ApiMessage::write),
    TRANSACTION_RESPONSE(TransactionResponse::read, ApiMessage::write),
    REGISTER_TXN_PARTITION_REQUEST(RegisterTxnPartitionRequest::read, ApiMessage::write),
    REGISTER_TXN_PARTITION_RESPONSE(RegisterTxnPartitionResponse::read, ApiMessage::write),
    WRITE_TXN_MARKERS_REQUEST(WriteTxnMarkersRequest::read, ApiMessage::write),
    WRITE_TXN_MARKERS_RESPONSE(WriteTxnMarkersResponse::read, ApiMessage::write),
    LIST_TRANSACTIONS_REQUEST(ListTransactionsRequest::read, ApiMessage::write),
    LIST_TRANSACTIONS_RESPONSE(ListTransactionsResponse::read, ApiMessage::write),
    DESCRIBE_TRANSACTIONS_REQUEST(DescribeTransactionsRequest::read, ApiMessage::write),
    DESCRIBE_TRANSACTIONS_RESPONSE(DescribeTransactionsResponse::read, ApiMessage::write),
    DESCRIBE_PRODUCERS_REQUEST(DescribeProducersRequest::read, ApiMessage::write),
    DESCRIBE_PRODUCERS_RESPONSE(DescribeProducersResponse::read, ApiMessage::write),
    FORWARD_STATUS_REQUEST(ForwardStatusRequest::read, ApiMessage::write),
    FORWARD_STATUS_RESPONSE(ForwardStatusResponse::read, ApiMessage::write),
    // Our transactional producer's versions (issue #20): Produce v2, InitProducerId v1,
    // EndTransaction v1, BeginTransaction v1's response. FindCoordinator v1 has v0's layout.
    PRODUCE_REQUEST_V2(
            b -> ProduceRequest.read(b, (short) 2),
            (m, out) -> ((ProduceRequest) m).write(out, (short) 2),
            m -> true,
            BodyCodec::checkProduceV2),
    INIT_PRODUCER_ID_REQUEST_V1(
            b -> InitProducerIdRequest.read(b, (short) 1),
            (m, out) -> ((InitProducerIdRequest) m).write(out, (short) 1)),
    END_TRANSACTION_REQUEST_V1(
            b -> EndTransactionRequest.read(b, (short) 1),
            (m, out) -> ((EndTransactionRequest) m).write(out, (short) 1)),
    BEGIN_TRANSACTION_RESPONSE_V1(
            b -> TransactionResponse.read(b, true), (m, out) -> ((TransactionResponse) m).write(out, true)),
    // Its answer is an OffsetCommitResponse (OFFSET_COMMIT_RESPONSE above).
    TXN_OFFSET_COMMIT_REQUEST(TxnOffsetCommitRequest::read, ApiMessage::write);

    final Function<ByteBuf, ApiMessage> reader;
    final BiConsumer<ApiMessage, ByteBuf> writer;
    final Predicate<ApiMessage> reencodesExactly;
    final Consumer<ApiMessage> postconditions;

    BodyCodec(Function<ByteBuf, ApiMessage> reader, BiConsumer<ApiMessage, ByteBuf> writer) {
        this(reader, writer, m -> true, m -> {});
    }

    BodyCodec(
            Function<ByteBuf, ApiMessage> reader,
            BiConsumer<ApiMessage, ByteBuf> writer,
            Predicate<ApiMessage> reencodesExactly,
            Consumer<ApiMessage> postconditions) {
        this.reader = reader;
        this.writer = writer;
        this.reencodesExactly = reencodesExactly;
        this.postconditions = postconditions;
    }

    /** The fuzz test method and corpus directory name: {@code PRODUCE_REQUEST} is {@code produceRequest}. */
    public String methodName() {
        StringBuilder s = new StringBuilder();
        for (String part : name().toLowerCase(Locale.ROOT).split("_")) {
            s.append(s.isEmpty() ? part : Character.toUpperCase(part.charAt(0)) + part.substring(1));
        }
        return s.toString();
    }

    private static void checkProduceV2(ApiMessage m) {
        ProduceRequest r = (ProduceRequest) m;
        check(
                r.transactionSequence() >= -1 && (r.transactionalId() != null || r.transactionSequence() == -1),
                "transactionSequence " + r.transactionSequence() + " accepted");
        checkProduce(m);
    }

    private static void checkProduce(ApiMessage m) {
        ProduceRequest r = (ProduceRequest) m;
        check(r.acks() == 0 || r.acks() == 1 || r.acks() == -1, "acks " + r.acks() + " accepted");
        check(r.timeoutMs() > 0, "timeoutMs " + r.timeoutMs() + " accepted");
        check(!r.topicData().isEmpty(), "empty topicData accepted");
        Set<String> seen = new HashSet<>();
        for (ProduceRequest.TopicData t : r.topicData()) {
            check(!t.partitions().isEmpty(), "empty partitions accepted");
            for (ProduceRequest.PartitionData p : t.partitions()) {
                check(seen.add(t.topic() + "\u0000" + p.partition()), "a partition twice accepted");
                if (p.records() != null) {
                    RecordSetTarget.checkSet(p.records(), r.transactionalId() != null, 1 << 20, 0L);
                }
            }
        }
    }

    private static void checkFetchRequest(ApiMessage m) {
        FetchRequest r = (FetchRequest) m;
        check(r.replicaId() >= -1 && r.maxWaitMs() >= 0 && r.minBytes() >= 0 && r.maxBytes() > 0, "range accepted");
        check(r.replicaEpoch() >= -1 && (r.replicaId() >= 0 || r.replicaEpoch() == -1), "replicaEpoch accepted");
        check(r.isolationLevel() == 0 || r.isolationLevel() == 1, "isolationLevel accepted");
        check(!r.topicPartitions().isEmpty(), "no topics accepted");
        for (FetchRequest.FetchTopic t : r.topicPartitions()) {
            check(!t.partitions().isEmpty(), "no partitions accepted");
            t.partitions().forEach(p -> check(p.partitionMaxBytes() > 0, "partitionMaxBytes accepted"));
        }
    }

    private static void checkEpochRequest(ApiMessage m) {
        OffsetForLeaderEpochRequest r = (OffsetForLeaderEpochRequest) m;
        check(r.replicaId() >= -1, "replicaId accepted");
        check(!r.topics().isEmpty(), "no topics accepted");
        r.topics().forEach(t -> check(!t.partitions().isEmpty(), "no partitions accepted"));
    }

    private static void checkFetchV0(ApiMessage m) {
        for (FetchResponse.FetchableTopicResponse t : ((FetchResponse) m).responses()) {
            for (FetchResponse.PartitionData p : t.partitions()) {
                if (p.records() != null) {
                    RecordSetTarget.checkSet(p.records(), true, Integer.MAX_VALUE, 0L);
                }
            }
        }
    }

    private static void checkFetchV1(ApiMessage m) {
        for (FetchResponseV1.Topic t : ((FetchResponseV1) m).responses()) {
            for (FetchResponseV1.PartitionData p : t.partitions()) {
                if (p.records() != null) {
                    RecordSetTarget.checkSet(p.records(), true, Integer.MAX_VALUE, 0L);
                }
            }
        }
    }

    private static boolean noNullRecords(ApiMessage m) {
        return ((FetchResponse) m)
                .responses().stream().flatMap(t -> t.partitions().stream()).allMatch(p -> p.records() != null);
    }

    private static boolean noNullRecordsV1(ApiMessage m) {
        return ((FetchResponseV1) m)
                .responses().stream().flatMap(t -> t.partitions().stream()).allMatch(p -> p.records() != null);
    }
}
