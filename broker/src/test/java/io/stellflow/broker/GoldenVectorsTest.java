package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.stellflow.testsupport.GoldenVectors;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Golden vectors G3, G4, G6 and G7 ({@code docs/spec/wire-protocol.md} §10) against a real broker.
 * The spec's vectors assume offsets 100 and 101 in leader epoch 3; a fresh single-node topic starts
 * at offset 0 in epoch 0, so the expected bytes are the golden ones with exactly those fields
 * patched (and G4 fetches from 0).
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class GoldenVectorsTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    static final String G3 = GoldenVectors.G3;

    static final String G4 = GoldenVectors.G4;

    static final String G6 = GoldenVectors.G6;

    static final String G7 = GoldenVectors.G7;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    RawClient client;

    @BeforeEach
    void start() throws Exception {
        client = new RawClient(NODES.start(transport).port());
        Requests.createTopic(client, "orders", 1);
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void g3IsAnsweredWithG6ShapeAndG4WithG7Bytes() throws Exception {
        byte[] g3 = ByteBufUtil.decodeHexDump(G3);
        client.sendRaw(g3);
        assertThat(ByteBufUtil.hexDump(client.receiveRawFrame())).isEqualTo(expectedG6(0));
        client.sendRaw(g3);
        assertThat(ByteBufUtil.hexDump(client.receiveRawFrame())).isEqualTo(expectedG6(1));

        byte[] g4 = ByteBufUtil.decodeHexDump(G4);
        ByteBuffer.wrap(g4).putLong(79, 0L); // fetchOffset 100 -> 0
        client.sendRaw(g4);
        assertThat(ByteBufUtil.hexDump(client.receiveRawFrame())).isEqualTo(expectedG7());
    }

    /** G6 with baseOffset {@code baseOffset} (frame offset 38) and currentLeaderEpoch 0 (offset 46). */
    private static String expectedG6(long baseOffset) {
        byte[] g6 = ByteBufUtil.decodeHexDump(G6);
        ByteBuffer.wrap(g6).putLong(38, baseOffset).putInt(46, 0);
        return ByteBufUtil.hexDump(g6);
    }

    /** G7 with highWatermark and lastStableOffset 2 (offsets 42, 58) and both batches' epoch 0 (82, 226). */
    private static String expectedG7() {
        byte[] g7 = ByteBufUtil.decodeHexDump(G7);
        ByteBuffer.wrap(g7).putLong(42, 2L).putLong(58, 2L).putInt(82, 0).putInt(226, 0);
        return ByteBufUtil.hexDump(g7);
    }
}
