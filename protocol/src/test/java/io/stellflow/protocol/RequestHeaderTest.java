package io.stellflow.protocol;

import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.support.Bufs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RequestHeaderTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    @Test
    void allFourteenFieldsRoundTrip() {
        RequestHeader header = new RequestHeader(
                ApiKeys.FETCH,
                (short) 0,
                (short) 2,
                -7,
                "client",
                "0af7651916cd43dd8448eb211c80319c",
                "b7ad6b7169203331",
                (byte) 1,
                "tenant-é",
                "quota",
                "",
                (byte) 3,
                "canary-7",
                (short) 0x7fff);
        ByteBuf out = bufs.heap();
        header.write(out);
        assertThat(RequestHeader.read(out)).isEqualTo(header);
        assertThat(out.isReadable()).isFalse();
    }

    @Test
    void minimalHeaderIs28BytesAndLeavesTheReaderAtTheBody() {
        ByteBuf out = bufs.heap();
        new RequestHeader(
                        (short) 1, (short) 0, (short) 2, 9, null, null, null, (byte) 0, null, null, null, (byte) 0,
                        null, (short) 0)
                .write(out);
        assertThat(out.readableBytes()).isEqualTo(Frames.MIN_REQUEST_PAYLOAD);
        out.writeByte(0x42);
        RequestHeader.read(out);
        assertThat(out.readableBytes()).isEqualTo(1);
    }

    @Test
    void peekCorrelationIdDoesNotConsumeAndNeedsTenBytes() {
        ByteBuf out = bufs.heap();
        RequestHeader.of(ApiKeys.METADATA, (short) 0, 0x01020304, "c").write(out);
        assertThat(RequestHeader.peekCorrelationId(out)).isEqualTo(0x01020304);
        assertThat(RequestHeader.peekApiKey(out)).isEqualTo(ApiKeys.METADATA);
        assertThat(out.readerIndex()).isZero();
        assertProtocolError(() -> RequestHeader.peekCorrelationId(out.slice(0, 9)), Errors.INVALID_REQUEST);
    }

    @Test
    void headerVersionOtherThan2IsUnsupportedVersionEvenWhenTheRestIsGarbage() {
        ByteBuf out = bufs.heap();
        out.writeShort(0).writeShort(0).writeShort(1).writeInt(5).writeByte(0xFF);
        assertProtocolError(() -> RequestHeader.read(out), Errors.UNSUPPORTED_VERSION);
    }

    @Test
    void everyTrafficClassOutside0To3IsInvalidRequest() {
        for (int tc : new int[] {-1, 4, 127, -128}) {
            ByteBuf out = bufs.heap();
            RequestHeader.of((short) 0, (short) 0, 1, null).write(out);
            out.setByte(23, tc); // 10 fixed + clientId, traceId, spanId (2 each) + traceFlags + 3 strings
            assertProtocolError(() -> RequestHeader.read(out), Errors.INVALID_REQUEST);
        }
        for (byte tc = 0; tc <= 3; tc++) {
            ByteBuf out = bufs.heap();
            RequestHeader.of((short) 0, (short) 0, 1, null).write(out);
            out.setByte(23, tc);
            assertThat(RequestHeader.read(out).trafficClass()).isEqualTo(tc);
        }
    }

    @Test
    void truncatedHeaderIsInvalidRequest() {
        ByteBuf out = bufs.heap();
        RequestHeader.of((short) 0, (short) 0, 1, "c1").write(out);
        for (int len = 6; len < out.readableBytes(); len++) {
            ByteBuf prefix = out.slice(0, len);
            assertProtocolError(() -> RequestHeader.read(prefix), Errors.INVALID_REQUEST);
        }
    }

    @Test
    void badClientIdStringsAreInvalidRequest() {
        ByteBuf utf8 = bufs.heap();
        utf8.writeShort(0).writeShort(0).writeShort(2).writeInt(1);
        utf8.writeShort(2).writeByte(0xC3).writeByte(0x28); // invalid continuation byte
        assertProtocolError(() -> RequestHeader.read(utf8), Errors.INVALID_REQUEST);

        ByteBuf minusTwo = bufs.heap();
        minusTwo.writeShort(0).writeShort(0).writeShort(2).writeInt(1).writeShort(-2);
        assertProtocolError(() -> RequestHeader.read(minusTwo), Errors.INVALID_REQUEST);
    }

    @Test
    void responseHeaderRoundTripsAndRejectsShortInput() {
        ByteBuf out = bufs.heap();
        ResponseHeader header = new ResponseHeader(42, (short) 2, Errors.THROTTLED, 1500);
        header.write(out);
        assertThat(out.readableBytes()).isEqualTo(ResponseHeader.SIZE);
        assertThat(ResponseHeader.read(out.duplicate())).isEqualTo(header);
        assertProtocolError(() -> ResponseHeader.read(out.slice(0, 11)), Errors.INVALID_REQUEST);
    }
}
