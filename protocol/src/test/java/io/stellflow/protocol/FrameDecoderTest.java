package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The one frame decoder under both policies, fed in chunks through {@link EmbeddedChannel}: request
 * streams (discard and answer oversized frames, close on an unanswerable length) and response
 * streams (fail on any length out of range).
 */
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
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests());
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
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests());
        ch.writeInbound(Unpooled.buffer().writeInt(-5).writeLong(42));
        assertThat(ch.isOpen()).isFalse();
        assertThat(nextInbound(ch)).isNull();
    }

    @Test
    void payloadShorterThanTenBytesClosesTheConnection() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests());
        ch.writeInbound(Unpooled.buffer().writeInt(9).writeZero(9));
        assertThat(ch.isOpen()).isFalse();
        assertThat(nextInbound(ch)).isNull();
    }

    @Test
    void shortButAnswerablePayloadIsPassedOn() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests());
        ch.writeInbound(Unpooled.buffer().writeInt(10).writeZero(10));
        ByteBuf payload = ch.readInbound();
        assertThat(payload.readableBytes()).isEqualTo(10);
        payload.release();
        assertThat(ch.isOpen()).isTrue();
    }

    @Test
    void oversizedFrameIsDiscardedWithoutBufferingAndTheStreamStaysInSync() {
        int limit = 64;
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(limit));
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
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(32));
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
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests());
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
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests());
        ByteBuf big = frame(ApiKeys.PRODUCE, 11, 100_000);
        ch.writeInbound(big.readRetainedSlice(50_000));
        big.release();
        assertThat(nextInbound(ch)).isNull();
        ch.close();
        // The leak detector (PARANOID in tests) reports the partial payload if it was not released.
        assertThat(ch.finish()).isFalse();
    }

    // ---- responses (OversizePolicy.FAIL) ----

    private static ByteBuf responseFrame(int payloadBytes, int seed) {
        ByteBuf f = Unpooled.buffer(4 + payloadBytes);
        f.writeInt(payloadBytes);
        for (int i = 0; i < payloadBytes; i++) {
            f.writeByte(i * 7 + seed);
        }
        return f;
    }

    @Test
    void responseFramesSplitAnywhereComeOutWhole() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forResponses());
        ByteBuf a = responseFrame(300_000, 1);
        ByteBuf b = responseFrame(0, 2);
        ByteBuf c = responseFrame(17, 3);
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
        assertThat(nextInbound(ch)).isNull();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aNegativeOrHugeResponseLengthFailsTheConnection() {
        for (int bad : new int[] {-1, 67_108_861}) {
            EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forResponses());
            assertThatThrownBy(() ->
                            ch.writeInbound(Unpooled.buffer().writeInt(bad).writeZero(8)))
                    .isInstanceOf(CorruptedFrameException.class)
                    .hasMessageContaining(Integer.toString(bad));
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aPartialResponseIsReleasedOnClose() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forResponses());
        ByteBuf a = responseFrame(10_000, 4);
        ch.writeInbound(a.readRetainedSlice(5_000));
        a.release();
        ch.close();
        assertThat(ch.finish()).isFalse();
    }

    // ---- the policies side by side ----

    @Test
    void aFrameAboveTheLimitIsAnsweredOnARequestStreamAndFailsAResponseStream() {
        EmbeddedChannel requests = new EmbeddedChannel(FrameDecoder.forRequests());
        EmbeddedChannel responses = new EmbeddedChannel(FrameDecoder.forResponses());
        int oversized = Frames.MAX_FRAME_LENGTH + 1;
        ByteBuf header = Unpooled.buffer();
        header.writeInt(oversized);
        RequestHeader.of(ApiKeys.FETCH, (short) 0, 4, null).write(header);
        ByteBuf copy = header.copy();
        requests.writeInbound(header);
        assertThat(requests.isOpen()).isTrue();
        assertThat(nextInbound(requests)).isNull(); // still discarding
        assertThatThrownBy(() -> responses.writeInbound(copy)).isInstanceOf(CorruptedFrameException.class);
        assertThat(FrameDecoder.forRequests().policy()).isEqualTo(FrameDecoder.OversizePolicy.DISCARD_AND_ANSWER);
        assertThat(FrameDecoder.forResponses().policy()).isEqualTo(FrameDecoder.OversizePolicy.FAIL);
        requests.finishAndReleaseAll();
        responses.finishAndReleaseAll();
    }

    @Test
    void aResponseShorterThanTenBytesIsPassedOnButARequestIsNot() {
        EmbeddedChannel responses = new EmbeddedChannel(FrameDecoder.forResponses());
        responses.writeInbound(Unpooled.buffer().writeInt(9).writeZero(9));
        ByteBuf payload = responses.readInbound();
        assertThat(payload.readableBytes()).isEqualTo(9);
        payload.release();
        assertThat(responses.isOpen()).isTrue();
        assertThat(responses.finish()).isFalse();
    }

    @Test
    void anUnanswerableRequestLengthIsReportedAsAUserEventBeforeTheClose() {
        List<Object> events = new ArrayList<>();
        List<Boolean> openWhenReported = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(), new ChannelInboundHandlerAdapter() {
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                events.add(evt);
                openWhenReported.add(ctx.channel().isOpen());
            }
        });
        ch.writeInbound(Unpooled.buffer().writeInt(-5).writeLong(42));
        assertThat(events).containsExactly(new FrameDecoder.UnsyncableFrame(-5));
        assertThat(openWhenReported).containsExactly(true);
        assertThat(ch.isOpen()).isFalse();
        assertThat(nextInbound(ch)).isNull();
    }

    @Test
    void anOversizedFrameIsAnsweredWithTheSpecCodeForItsApi() {
        assertThat(new OversizedFrame(ApiKeys.PRODUCE, 1, 1 << 27).answerErrorCode())
                .isEqualTo(Errors.RECORD_LIST_TOO_LARGE);
        assertThat(new OversizedFrame(ApiKeys.FETCH, 1, 1 << 27).answerErrorCode())
                .isEqualTo(Errors.INVALID_REQUEST);
        assertThat(new OversizedFrame(ApiKeys.METADATA, 1, 1 << 27).answerErrorCode())
                .isEqualTo(Errors.INVALID_REQUEST);
    }
}
