package io.stellflow.protocol.message;

import static io.stellflow.protocol.support.Bufs.hexOf;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Fetch request v2 ({@code docs/protocol-additions.md}): the follower's broker epoch after
 * {@code replicaId}, byte-exact against the worked example; v0/v1 bodies unchanged; strict ranges.
 */
class FetchRequestV2Test {
    /** Follower 2 at broker epoch 300: "orders"-0 from offset 120 at leader epoch 3, the example of the docs. */
    static final String EXAMPLE = "00000002" + "000000000000012c" + "000001f4" + "00000001" + "00100000" + "00"
            + "00000000" + "00000001" + "0006" + "6f7264657273" + "00000001" + "00000000" + "00000003"
            + "0000000000000078" + "0000000000000000" + "00100000";

    private final Bufs bufs = new Bufs();

    @AfterEach
    void release() {
        bufs.close();
    }

    private static FetchRequest example(long replicaEpoch) {
        return new FetchRequest(
                2,
                500,
                1,
                1 << 20,
                FetchRequest.READ_UNCOMMITTED,
                0,
                List.of(new FetchRequest.FetchTopic(
                        "orders", List.of(new FetchRequest.FetchPartition(0, 3, 120, 0, 1 << 20)))),
                replicaEpoch);
    }

    @Test
    void v2CarriesTheReplicaEpochAfterTheReplicaIdAndV1DoesNot() {
        ByteBuf v2 = bufs.heap();
        example(300).write(v2, FetchRequest.VERSION_REPLICA_EPOCH);
        assertThat(hexOf(v2)).isEqualTo(EXAMPLE);
        assertThat(FetchRequest.read(bufs.hex(EXAMPLE), FetchRequest.VERSION_REPLICA_EPOCH))
                .isEqualTo(example(300));

        ByteBuf v1 = bufs.heap();
        example(300).write(v1, (short) 1);
        String v1Hex = EXAMPLE.substring(0, 8) + EXAMPLE.substring(24);
        assertThat(hexOf(v1)).isEqualTo(v1Hex);
        assertThat(FetchRequest.read(bufs.hex(v1Hex), (short) 1).replicaEpoch())
                .isEqualTo(FetchRequest.NO_REPLICA_EPOCH);
        ByteBuf v0 = bufs.heap();
        example(300).write(v0);
        assertThat(hexOf(v0)).isEqualTo(v1Hex);
    }

    @Test
    void aConsumerSendsNoEpochAndAnEpochBelowMinusOneIsRefused() {
        ByteBuf consumer = bufs.heap();
        FetchRequest asConsumer = new FetchRequest(
                -1, 0, 0, 1, FetchRequest.READ_COMMITTED, 0, example(5).topicPartitions(), 5);
        asConsumer.write(consumer, FetchRequest.VERSION_REPLICA_EPOCH);
        assertProtocolError(
                () -> FetchRequest.read(consumer, FetchRequest.VERSION_REPLICA_EPOCH), Errors.INVALID_REQUEST);

        ByteBuf negative = bufs.heap();
        example(-2).write(negative, FetchRequest.VERSION_REPLICA_EPOCH);
        assertProtocolError(
                () -> FetchRequest.read(negative, FetchRequest.VERSION_REPLICA_EPOCH), Errors.INVALID_REQUEST);

        ByteBuf unknown = bufs.heap();
        example(-1).write(unknown, FetchRequest.VERSION_REPLICA_EPOCH);
        assertThat(FetchRequest.read(unknown, FetchRequest.VERSION_REPLICA_EPOCH)
                        .replicaEpoch())
                .isEqualTo(-1);
    }

    @Test
    void aTruncatedV2BodyIsInvalid() {
        String cut = EXAMPLE.substring(0, 20); // replicaId and half the epoch
        assertProtocolError(
                () -> FetchRequest.read(bufs.hex(cut), FetchRequest.VERSION_REPLICA_EPOCH), Errors.INVALID_REQUEST);
    }
}
