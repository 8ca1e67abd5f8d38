package io.stellflow.protocol.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.message.CreateTopicResponse.CreateTopicPartition;
import java.util.List;
import org.junit.jupiter.api.Test;

/** CreateTopic response v2 appends a nullable errorMessage; v0 and v1 bytes are unchanged by it. */
class CreateTopicResponseVersionsTest {
    private static final CreateTopicResponse REFUSED = new CreateTopicResponse(
            "a.b",
            List.of(new CreateTopicPartition(-1, Errors.TOPIC_ALREADY_EXISTS, -1)),
            "collides with existing topic a_b");

    private static byte[] bytes(CreateTopicResponse r, short version) {
        ByteBuf out = Unpooled.buffer();
        r.write(out, version);
        return ByteBufUtil.getBytes(out);
    }

    @Test
    void v0AndV1AreTheSpecLayoutWithoutTheMessage() {
        // topic "a.b" (int16 length 3), one entry: partition -1, errorCode 29, leaderEpoch -1.
        String v0 = "0003612e62" + "00000001" + "ffffffff" + "001d" + "ffffffff";
        assertThat(ByteBufUtil.hexDump(bytes(REFUSED, (short) 0))).isEqualTo(v0);
        assertThat(ByteBufUtil.hexDump(bytes(REFUSED, (short) 1))).isEqualTo(v0);
        assertThat(CreateTopicResponse.read(Unpooled.wrappedBuffer(bytes(REFUSED, (short) 1)), (short) 1))
                .isEqualTo(new CreateTopicResponse("a.b", REFUSED.partitions()));
    }

    @Test
    void v2CarriesTheMessageOrNull() {
        byte[] v2 = bytes(REFUSED, (short) 2);
        assertThat(CreateTopicResponse.read(Unpooled.wrappedBuffer(v2), (short) 2))
                .isEqualTo(REFUSED);
        CreateTopicResponse ok = new CreateTopicResponse("t", List.of(new CreateTopicPartition(0, Errors.NONE, 0)));
        byte[] okV2 = bytes(ok, (short) 2);
        assertThat(ByteBufUtil.hexDump(okV2)).endsWith("ffff");
        assertThat(CreateTopicResponse.read(Unpooled.wrappedBuffer(okV2), (short) 2))
                .isEqualTo(ok);
        // A v2 body read as v0 has trailing bytes: refused, not silently cut.
        assertThatThrownBy(() -> CreateTopicResponse.read(Unpooled.wrappedBuffer(v2), (short) 0))
                .isInstanceOf(ProtocolException.class);
    }
}
