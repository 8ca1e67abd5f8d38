package io.stellflow.controller.server;

import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.BrokerDescription;
import io.stellflow.controller.proto.DescribeClusterRequest;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.DescribeQuorumRequest;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ErrorCode;
import java.io.IOException;

/**
 * The description RPCs, queries that write nothing and are not commands: DescribeQuorum (the Raft
 * quorum as the active controller sees it) and DescribeCluster (this controller, the metadata
 * offset, the cluster id and every registered broker).
 *
 * <p>Reached only while active ({@link NotControllerGuard}). Thread-safety: stateless apart from
 * its collaborators; handlers run on gRPC executor threads concurrently.
 */
final class DescribeRpcs {
    private final int nodeId;
    private final Quorum quorum;

    /**
     * @param nodeId this controller's {@code node.id}, answered as the controller id
     */
    DescribeRpcs(int nodeId, Quorum quorum) {
        this.nodeId = nodeId;
        this.quorum = quorum;
    }

    /** DescribeQuorum: leader, term, indexes and voters; UNKNOWN_SERVER_ERROR when Raft cannot tell. */
    DescribeQuorumResponse describeQuorum(DescribeQuorumRequest req) {
        DescribeQuorumResponse.Builder r = DescribeQuorumResponse.newBuilder();
        try {
            RaftQuorum.QuorumState q = quorum.describe();
            String clusterId = quorum.image().clusterId();
            r.setClusterId(clusterId == null ? "" : clusterId)
                    .setLeaderId(q.leaderId())
                    .setTerm(q.term())
                    .setCommittedIndex(q.committedIndex())
                    .setLastIndex(q.lastIndex())
                    .addAllVoters(q.voters());
        } catch (IOException e) {
            r.setError(ErrorCode.UNKNOWN_SERVER_ERROR).setErrorMessage(e.toString());
        }
        return r.build();
    }

    /** DescribeCluster: this controller's id, the image's offset and cluster id, every broker. */
    DescribeClusterResponse describeCluster(DescribeClusterRequest req) {
        DescribeClusterResponse.Builder r = DescribeClusterResponse.newBuilder();
        MetadataImage img = quorum.image();
        r.setControllerId(nodeId)
                .setMetadataOffset(img.offset())
                .setClusterId(img.clusterId() == null ? "" : img.clusterId());
        for (BrokerRegistration b : img.brokers().values()) {
            BrokerDescription.Builder d = BrokerDescription.newBuilder()
                    .setBrokerId(b.id())
                    .setIncarnationId(MetadataRecords.uuid(b.incarnationId()))
                    .setBrokerEpoch(b.brokerEpoch())
                    .setRack(b.rack())
                    .setFenced(b.fenced());
            b.listeners().forEach(l -> d.addListeners(l.toProto()));
            r.addBrokers(d);
        }
        return r.build();
    }
}
