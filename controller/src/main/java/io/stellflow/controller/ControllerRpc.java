package io.stellflow.controller;

import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DeleteTopicsRequest;
import io.stellflow.controller.proto.DeleteTopicsResponse;
import io.stellflow.controller.proto.DescribeClusterRequest;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.DescribeConfigsRequest;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.DescribeQuorumRequest;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.FollowMetadataRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.MetadataEvent;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;

/**
 * gRPC method descriptors of {@code stellflow.controller.v1.ControllerService}
 * ({@code controller_service.proto}), built with grpc-java's generic API and protobuf marshallers.
 * They are equivalent to what protoc-gen-grpc-java would generate (same full method names), so
 * clients generated from the proto in any language interoperate.
 *
 * <p>Thread-safety: immutable constants.
 */
public final class ControllerRpc {
    /** Full service name from the proto package. */
    public static final String SERVICE = "stellflow.controller.v1.ControllerService";

    public static final MethodDescriptor<RegisterBrokerRequest, RegisterBrokerResponse> REGISTER_BROKER = unary(
            "RegisterBroker", RegisterBrokerRequest.getDefaultInstance(), RegisterBrokerResponse.getDefaultInstance());
    public static final MethodDescriptor<BrokerHeartbeatRequest, BrokerHeartbeatResponse> BROKER_HEARTBEAT = unary(
            "BrokerHeartbeat",
            BrokerHeartbeatRequest.getDefaultInstance(),
            BrokerHeartbeatResponse.getDefaultInstance());
    public static final MethodDescriptor<CreateTopicsRequest, CreateTopicsResponse> CREATE_TOPICS =
            unary("CreateTopics", CreateTopicsRequest.getDefaultInstance(), CreateTopicsResponse.getDefaultInstance());
    public static final MethodDescriptor<DeleteTopicsRequest, DeleteTopicsResponse> DELETE_TOPICS =
            unary("DeleteTopics", DeleteTopicsRequest.getDefaultInstance(), DeleteTopicsResponse.getDefaultInstance());
    public static final MethodDescriptor<CreatePartitionsRequest, CreatePartitionsResponse> CREATE_PARTITIONS = unary(
            "CreatePartitions",
            CreatePartitionsRequest.getDefaultInstance(),
            CreatePartitionsResponse.getDefaultInstance());
    public static final MethodDescriptor<AlterPartitionRequest, AlterPartitionResponse> ALTER_PARTITION = unary(
            "AlterPartition", AlterPartitionRequest.getDefaultInstance(), AlterPartitionResponse.getDefaultInstance());
    public static final MethodDescriptor<DescribeQuorumRequest, DescribeQuorumResponse> DESCRIBE_QUORUM = unary(
            "DescribeQuorum", DescribeQuorumRequest.getDefaultInstance(), DescribeQuorumResponse.getDefaultInstance());
    public static final MethodDescriptor<DescribeClusterRequest, DescribeClusterResponse> DESCRIBE_CLUSTER = unary(
            "DescribeCluster",
            DescribeClusterRequest.getDefaultInstance(),
            DescribeClusterResponse.getDefaultInstance());
    public static final MethodDescriptor<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>
            INCREMENTAL_ALTER_CONFIGS = unary(
                    "IncrementalAlterConfigs",
                    IncrementalAlterConfigsRequest.getDefaultInstance(),
                    IncrementalAlterConfigsResponse.getDefaultInstance());
    public static final MethodDescriptor<DescribeConfigsRequest, DescribeConfigsResponse> DESCRIBE_CONFIGS = unary(
            "DescribeConfigs",
            DescribeConfigsRequest.getDefaultInstance(),
            DescribeConfigsResponse.getDefaultInstance());
    public static final MethodDescriptor<ElectLeadersRequest, ElectLeadersResponse> ELECT_LEADERS =
            unary("ElectLeaders", ElectLeadersRequest.getDefaultInstance(), ElectLeadersResponse.getDefaultInstance());
    public static final MethodDescriptor<AllocateProducerIdsRequest, AllocateProducerIdsResponse>
            ALLOCATE_PRODUCER_IDS = unary(
                    "AllocateProducerIds",
                    AllocateProducerIdsRequest.getDefaultInstance(),
                    AllocateProducerIdsResponse.getDefaultInstance());
    public static final MethodDescriptor<FollowMetadataRequest, MetadataEvent> FOLLOW_METADATA =
            MethodDescriptor.<FollowMetadataRequest, MetadataEvent>newBuilder()
                    .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "FollowMetadata"))
                    .setRequestMarshaller(ProtoUtils.marshaller(FollowMetadataRequest.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(MetadataEvent.getDefaultInstance()))
                    .build();

    private ControllerRpc() {}

    private static <Q extends Message, R extends Message> MethodDescriptor<Q, R> unary(String name, Q req, R resp) {
        return MethodDescriptor.<Q, R>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(ProtoUtils.marshaller(req))
                .setResponseMarshaller(ProtoUtils.marshaller(resp))
                .build();
    }
}
