package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ProducerIdRpcsTest {
    private final FakeQuorum quorum = new FakeQuorum(1);
    private final CommandsTest.RecordingMetrics metrics = new CommandsTest.RecordingMetrics();
    private final ProducerIdRpcs rpcs = new ProducerIdRpcs(quorum, new Commands(quorum, 5_000, metrics, () -> 0L));

    ProducerIdRpcsTest() {
        quorum.with(List.of(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                .setBrokerId(1)
                .setIncarnationId(MetadataRecords.uuid(new UUID(1, 1)))
                .setBrokerEpoch(101)
                .build())));
    }

    private AllocateProducerIdsResponse allocate(long epoch) {
        return rpcs.allocate(AllocateProducerIdsRequest.newBuilder()
                .setBrokerId(1)
                .setBrokerEpoch(epoch)
                .build());
    }

    @Test
    void consecutiveBlocksFollowEachOtherAndAFailedCommitGivesNoBlock() {
        AllocateProducerIdsResponse a = allocate(101);
        assertThat(a.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(a.getFirstProducerId()).isZero();
        assertThat(a.getBlockSize()).isEqualTo(ProducerIdRpcs.BLOCK_SIZE);

        quorum.failNext(ErrorCode.REQUEST_TIMED_OUT);
        AllocateProducerIdsResponse timedOut = allocate(101);
        assertThat(timedOut.getError()).isEqualTo(ErrorCode.REQUEST_TIMED_OUT);
        assertThat(timedOut.getBlockSize()).isZero();

        AllocateProducerIdsResponse b = allocate(101);
        assertThat(b.getFirstProducerId()).isEqualTo(1000);
        assertThat(quorum.image().nextProducerId()).isEqualTo(2000);
    }

    @Test
    void aStaleBrokerEpochIsRefusedWithoutACommit() {
        int before = quorum.submitted.size();
        AllocateProducerIdsResponse r = allocate(7);
        assertThat(r.getError()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH);
        assertThat(r.getErrorMessage()).isEqualTo("broker 1 epoch 7 is not current");
        assertThat(quorum.submitted).hasSize(before);
        assertThat(quorum.image().nextProducerId()).isZero();
    }
}
