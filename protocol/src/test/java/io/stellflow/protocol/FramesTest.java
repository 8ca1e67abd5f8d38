package io.stellflow.protocol;

import static io.stellflow.protocol.support.Bufs.hexOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FramesTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    @Test
    void writeRequestProducesG1() {
        ByteBuf out = bufs.heap();
        int frameLength = Frames.writeRequest(
                out,
                RequestHeader.of(ApiKeys.API_VERSIONS, (short) 0, 1, "c1"),
                new ApiVersionsRequest("stellflow-java-sdk", "0.0.1", List.of()));
        assertThat(frameLength).isEqualTo(61);
        assertThat(hexOf(out)).isEqualTo(GoldenVectorsTest.G1);
    }

    @Test
    void writeResponseProducesG6() {
        ByteBuf out = bufs.heap();
        Frames.writeResponse(
                out,
                2,
                new ProduceResponse(List.of(new ProduceResponse.TopicResponse(
                        "orders", List.of(new ProduceResponse.PartitionResponse(0, Errors.NONE, 100, 3, -1, 0))))));
        assertThat(hexOf(out)).isEqualTo(GoldenVectorsTest.G6);
    }

    @Test
    void writeErrorResponseProducesG5AndRefusesNone() {
        ByteBuf out = bufs.heap().writeByte(0xAA);
        out.skipBytes(1);
        assertThat(Frames.writeErrorResponse(out, 1, Errors.UNSUPPORTED_VERSION))
                .isEqualTo(12);
        assertThat(hexOf(out)).isEqualTo(GoldenVectorsTest.G5);
        assertThatThrownBy(() -> Frames.writeErrorResponse(out, 1, Errors.NONE))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
