package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import org.junit.jupiter.api.Test;

class ResponseFrameDecoderTest {

    private static ByteBuf frame(int payloadBytes, int seed) {
        ByteBuf f = Unpooled.buffer(4 + payloadBytes);
        f.writeInt(payloadBytes);
        for (int i = 0; i < payloadBytes; i++) {
            f.writeByte(i * 7 + seed);
        }
        return f;
    }

    @Test
    void framesSplitAnywhereComeOutWhole() {
        EmbeddedChannel ch = new EmbeddedChannel(new ResponseFrameDecoder());
        ByteBuf a = frame(300_000, 1);
        ByteBuf b = frame(0, 2);
        ByteBuf c = frame(17, 3);
        ByteBuf stream = Unpooled.buffer()
                .writeBytes(a, 0, a.readableBytes())
                .writeBytes(b, 0, 4)
                .writeBytes(c, 0, 21);
        for (int chunk : new int[] {3, 1, 65536, 100_000, 7}) {
            ch.writeInbound(stream.readRetainedSlice(Math.min(chunk, stream.readableBytes())));
        }
        ch.writeInbound(stream.readRetainedSlice(stream.readableBytes()));
        stream.release();
        ByteBuf first = ch.readInbound();
        ByteBuf empty = ch.readInbound();
        ByteBuf third = ch.readInbound();
        assertThat(ByteBufUtil.equals(first, a.slice(4, 300_000))).isTrue();
        assertThat(first.capacity()).isEqualTo(300_000);
        assertThat(empty.readableBytes()).isZero();
        assertThat(ByteBufUtil.equals(third, c.slice(4, 17))).isTrue();
        for (ByteBuf x : new ByteBuf[] {a, b, c, first, empty, third}) {
            x.release();
        }
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aNegativeOrHugeLengthFailsTheConnection() {
        for (int bad : new int[] {-1, 67_108_861}) {
            EmbeddedChannel ch = new EmbeddedChannel(new ResponseFrameDecoder());
            assertThatThrownBy(() ->
                            ch.writeInbound(Unpooled.buffer().writeInt(bad).writeZero(8)))
                    .isInstanceOf(CorruptedFrameException.class)
                    .hasMessageContaining(Integer.toString(bad));
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aPartialFrameIsReleasedOnClose() {
        EmbeddedChannel ch = new EmbeddedChannel(new ResponseFrameDecoder());
        ByteBuf a = frame(10_000, 4);
        ch.writeInbound(a.readRetainedSlice(5_000));
        a.release();
        ch.close();
        assertThat(ch.finish()).isFalse();
    }
}
