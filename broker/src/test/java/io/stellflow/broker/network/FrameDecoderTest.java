package io.stellflow.broker.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.RequestHeader;
import org.junit.jupiter.api.Test;

class FrameDecoderTest {

    private static ByteBuf frame(short apiKey, int correlationId, int bodyBytes) {
        ByteBuf payload = Unpooled.buffer();
        RequestHeader.of(apiKey, (short) 0, correlationId, "c").write(payload);
        payload.writeZero(bodyBytes);
        ByteBuf frame = Unpooled.buffer();
        frame.writeInt(payload.readableBytes());
        frame.writeBytes(payload);
        payload.release();
        return frame;
    }

    private static Object nextInbound(EmbeddedChannel ch) {
        return ch.readInbound();
    }

    @Test
    void emitsWholePayloadsFedByteByByte() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ByteBuf two = Unpooled.buffer();
        ByteBuf a = frame(ApiKeys.METADATA, 1, 3);
        ByteBuf b = frame(ApiKeys.FETCH, 2, 0);
        int payloadA = a.readableBytes() - 4;
        two.writeBytes(a).writeBytes(b);
        a.release();
        b.release();
        while (two.isReadable()) {
            ch.writeInbound(two.readRetainedSlice(1));
        }
        two.release();
        ByteBuf first = ch.readInbound();
        ByteBuf second = ch.readInbound();
        assertThat(first.readableBytes()).isEqualTo(payloadA);
        assertThat(RequestHeader.peekCorrelationId(first)).isEqualTo(1);
        assertThat(RequestHeader.peekCorrelationId(second)).isEqualTo(2);
        assertThat(nextInbound(ch)).isNull();
        first.release();
        second.release();
        assertThat(ch.isOpen()).isTrue();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void negativeFrameLengthClosesTheConnection() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ch.writeInbound(Unpooled.buffer().writeInt(-5).writeLong(42));
        assertThat(ch.isOpen()).isFalse();
        assertThat(nextInbound(ch)).isNull();
    }

    @Test
    void payloadShorterThanTenBytesClosesTheConnection() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ch.writeInbound(Unpooled.buffer().writeInt(9).writeZero(9));
        assertThat(ch.isOpen()).isFalse();
        assertThat(nextInbound(ch)).isNull();
    }

    @Test
    void shortButAnswerablePayloadIsPassedOn() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ch.writeInbound(Unpooled.buffer().writeInt(10).writeZero(10));
        ByteBuf payload = ch.readInbound();
        assertThat(payload.readableBytes()).isEqualTo(10);
        payload.release();
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void oversizedFrameIsDiscardedWithoutBufferingAndTheStreamStaysInSync() {
        int limit = 64;
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(limit));
        int oversized = 10_000;
        ByteBuf header = Unpooled.buffer();
        header.writeInt(oversized);
        RequestHeader.of(ApiKeys.PRODUCE, (short) 0, 77, null).write(header);
        int written = header.readableBytes() - 4;
        ch.writeInbound(header);
        // Feed the rest in 1000-byte chunks; nothing is emitted until the last one.
        while (written < oversized) {
            int chunk = Math.min(1000, oversized - written);
            ch.writeInbound(Unpooled.buffer().writeZero(chunk));
            written += chunk;
            if (written < oversized) {
                assertThat(nextInbound(ch)).isNull();
            }
        }
        OversizedFrame discarded = ch.readInbound();
        assertThat(discarded).isEqualTo(new OversizedFrame(ApiKeys.PRODUCE, 77, oversized));
        ch.writeInbound(frame(ApiKeys.API_VERSIONS, 78, 0));
        ByteBuf next = ch.readInbound();
        assertThat(RequestHeader.peekCorrelationId(next)).isEqualTo(78);
        next.release();
        assertThat(ch.isOpen()).isTrue();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void oversizedFrameHeaderSplitAcrossReads() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(32));
        ByteBuf all = Unpooled.buffer();
        all.writeInt(40);
        RequestHeader.of(ApiKeys.METADATA, (short) 0, 5, null).write(all);
        all.writeZero(40 - 28);
        ch.writeInbound(all.readRetainedSlice(7));
        ch.writeInbound(all.readRetainedSlice(all.readableBytes()));
        all.release();
        assertThat((OversizedFrame) ch.readInbound()).isEqualTo(new OversizedFrame(ApiKeys.METADATA, 5, 40));
    }

    @Test
    void aFrameSpanningReadsArrivesAsOneExactlySizedBufferWithTheSameBytes() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        int body = 1 << 20;
        ByteBuf big = frame(ApiKeys.PRODUCE, 9, body);
        for (int i = 4 + 20; i < big.writerIndex(); i++) {
            big.setByte(i, i * 31);
        }
        ByteBuf small = frame(ApiKeys.FETCH, 10, 5);
        ByteBuf stream =
                Unpooled.buffer().writeBytes(big, 0, big.readableBytes()).writeBytes(small);
        small.release();
        // 64 KiB reads, the last one also carrying the next (small) frame.
        while (stream.isReadable()) {
            ch.writeInbound(stream.readRetainedSlice(Math.min(65536, stream.readableBytes())));
        }
        stream.release();
        ByteBuf payload = ch.readInbound();
        assertThat(payload.readableBytes()).isEqualTo(big.readableBytes() - 4);
        assertThat(payload.capacity()).isEqualTo(payload.readableBytes());
        // The reads are heap buffers: a direct payload is the decoder's own buffer, not a slice of them.
        assertThat(payload.isDirect()).isTrue();
        assertThat(io.netty.buffer.ByteBufUtil.equals(payload, big.slice(4, big.readableBytes() - 4)))
                .isTrue();
        ByteBuf next = ch.readInbound();
        assertThat(RequestHeader.peekCorrelationId(next)).isEqualTo(10);
        big.release();
        payload.release();
        next.release();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aPartialFrameIsReleasedWhenTheConnectionCloses() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        ByteBuf big = frame(ApiKeys.PRODUCE, 11, 100_000);
        ch.writeInbound(big.readRetainedSlice(50_000));
        big.release();
        assertThat(nextInbound(ch)).isNull();
        ch.close();
        // The leak detector (PARANOID in tests) reports the partial payload if it was not released.
        assertThat(ch.finish()).isFalse();
    }
}
