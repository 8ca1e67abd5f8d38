package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Golden vectors G3, G4, G6 and G7 (spec §10) against a real broker. The spec's vectors assume
 * offsets 100 and 101 in leader epoch 3; a fresh single-node topic starts at offset 0 in epoch 0, so
 * the expected bytes are the golden ones with exactly those fields patched (and G4 fetches from 0).
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
class GoldenVectorsTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    static final String G3 =
            "000000ce0002000000020000000200026331ffffffff00ffffffffffff00ffff0000ffffffff00007530000000010006"
                    + "6f72646572730000000100000000000000900000000000000088ffffffff01a99a047f00000000000000000196b37c74"
                    + "0000000196b37c7400ffffffffffffffffffffffffffff0000000100000053000000000000000000000000000000000a"
                    + "6f726465722d313030310000000e7b22616d6f756e74223a3139397d00000001000c636f6e74656e742d747970650000"
                    + "00106170706c69636174696f6e2f6a736f6e";

    static final String G4 =
            "0000005f0003000000020000000300026331ffffffff00ffffffffffff00ffff0000ffffffff000001f4000000010010"
                    + "000000000000000000000100066f72646572730000000100000000ffffffff0000000000000064ffffffffffffffff00"
                    + "100000";

    static final String G6 =
            "0000003e0000000200020000000000000000000100066f72646572730000000100000000000000000000000000640000"
                    + "0003ffffffffffffffff0000000000000000";

    static final String G7 =
            "00000166000000030002000000000000000000000000000100066f726465727300000001000000000000000000000000"
                    + "006600000000000000000000000000000066000000000000012000000000000000880000000301a99a047f0000000000"
                    + "0000000196b37c740000000196b37c7400ffffffffffffffffffffffffffff0000000100000053000000000000000000"
                    + "000000000000000a6f726465722d313030310000000e7b22616d6f756e74223a3139397d00000001000c636f6e74656e"
                    + "742d74797065000000106170706c69636174696f6e2f6a736f6e00000001000000880000000301a99a047f0000000000"
                    + "0000000196b37c740000000196b37c7400ffffffffffffffffffffffffffff0000000100000053000000000000000000"
                    + "000000000000000a6f726465722d313030310000000e7b22616d6f756e74223a3139397d00000001000c636f6e74656e"
                    + "742d74797065000000106170706c69636174696f6e2f6a736f6e";

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
