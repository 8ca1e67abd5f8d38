package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.DescribeClusterRequest;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.DescribeQuorumRequest;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class DescribeRpcsTest {
    private final FakeQuorum quorum = new FakeQuorum(4);
    private final DescribeRpcs rpcs = new DescribeRpcs(4, quorum);

    @Test
    void describeClusterNamesThisControllerTheOffsetAndEveryBroker() {
        UUID incarnation = new UUID(1, 9);
        quorum.with(List.of(
                MetadataRecords.of(
                        ClusterIdRecord.newBuilder().setClusterId("c").build()),
                MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                        .setBrokerId(9)
                        .setIncarnationId(MetadataRecords.uuid(incarnation))
                        .setRack("r1")
                        .addListeners(new BrokerEndpoint("PLAINTEXT", "127.0.0.1", 9092).toProto())
                        .setFenced(true)
                        .build())));
        DescribeClusterResponse r = rpcs.describeCluster(DescribeClusterRequest.getDefaultInstance());
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getControllerId()).isEqualTo(4);
        assertThat(r.getClusterId()).isEqualTo("c");
        assertThat(r.getMetadataOffset()).isEqualTo(1);
        assertThat(r.getBrokersList()).singleElement().satisfies(b -> {
            assertThat(b.getBrokerId()).isEqualTo(9);
            assertThat(MetadataRecords.uuid(b.getIncarnationId())).isEqualTo(incarnation);
            assertThat(b.getBrokerEpoch()).isEqualTo(1);
            assertThat(b.getRack()).isEqualTo("r1");
            assertThat(b.getFenced()).isTrue();
            assertThat(b.getListenersList()).extracting(l -> l.getPort()).containsExactly(9092);
        });
    }

    @Test
    void withoutAClusterIdYetItIsEmpty() {
        assertThat(rpcs.describeCluster(DescribeClusterRequest.getDefaultInstance())
                        .getClusterId())
                .isEmpty();
        assertThat(rpcs.describeCluster(DescribeClusterRequest.getDefaultInstance())
                        .getBrokersList())
                .isEmpty();
    }

    @Test
    void aQuorumRaftCannotDescribeIsAnUnknownServerError() {
        DescribeQuorumResponse r = rpcs.describeQuorum(DescribeQuorumRequest.getDefaultInstance());
        assertThat(r.getError()).isEqualTo(ErrorCode.UNKNOWN_SERVER_ERROR);
        assertThat(r.getErrorMessage()).contains("no Raft server in unit tests");
    }
}
