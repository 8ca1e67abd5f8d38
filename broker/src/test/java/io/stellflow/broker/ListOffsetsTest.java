package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ListOffsetsResponse.ListOffsetsPartitionResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.testsupport.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class ListOffsetsTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    /** One node per transport; each test has a topic of its own, named after it. */
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    RawClient client;
    String t;

    @BeforeEach
    void start(TestInfo test) throws Exception {
        client = new RawClient(BROKERS.get(transport).port());
        t = test.getTestMethod().orElseThrow().getName();
        Requests.createTopic(client, t, 1);
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void emptyPartition() throws Exception {
        assertThat(Requests.listOffsets(client, t, 0, -1, -2, 5))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 0, List.of()));
        assertThat(Requests.listOffsets(client, t, 0, -1, -1, 5))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 0, List.of(0L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 0, 1).errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE);
    }

    @Test
    void workedExampleWithRecordGranularity() throws Exception {
        // Offsets 0..3 with timestamps 1000..4000; 1 and 2 share one batch so the lookup must look
        // inside the batch.
        Requests.produceOne(client, t, 0, Requests.batch(1, 1000));
        ByteBuf two = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(two, 2000);
        b.append(2000, null, new byte[] {1});
        b.append(3000, null, new byte[] {2});
        b.close();
        Requests.produceOne(client, t, 0, ByteBufUtil.getBytes(two));
        Requests.produceOne(client, t, 0, Requests.batch(1, 4000));

        assertThat(Requests.listOffsets(client, t, 0, -1, -2, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 0, List.of(0L)));
        assertThat(Requests.listOffsets(client, t, 0, 0, -1, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, -1, 4, List.of(4L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 2500, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, 3000, 2, List.of(2L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 2000, 10))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NONE, 0, 2000, 1, List.of(1L, 2L, 3L)));
        assertThat(Requests.listOffsets(client, t, 0, -1, 5000, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.OFFSET_OUT_OF_RANGE, 0, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, t, 0, -1, -2, 2).offsets()).containsExactly(0L, 1L);
    }

    @Test
    void partitionErrors() throws Exception {
        assertThat(Requests.listOffsets(client, t, 0, -1, -1, 0))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.INVALID_REQUEST, 0, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, t, 0, -1, -3, 1).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(Requests.listOffsets(client, t, 0, 7, -1, 1))
                .isEqualTo(new ListOffsetsPartitionResponse(0, Errors.NOT_LEADER_OR_FOLLOWER, 0, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, "nope", 0, -1, -1, 1))
                .isEqualTo(
                        new ListOffsetsPartitionResponse(0, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, -1, List.of()));
        assertThat(Requests.listOffsets(client, t, 1, -1, -1, 1).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }
}
