package io.stellflow.protocol.fuzz;

import static io.stellflow.protocol.fuzz.Oracle.check;
import static io.stellflow.protocol.fuzz.Oracle.expectCode;
import static io.stellflow.protocol.fuzz.Oracle.expectError;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;

/**
 * Fuzz target: a request payload ({@code docs/spec/wire-protocol.md} §3, header v2; v0 and v1 must
 * be refused) through {@link RequestHeader#peekApiKey}, {@link RequestHeader#peekCorrelationId} and
 * {@link RequestHeader#read}, and the same bytes as a response header ({@link ResponseHeader#read},
 * spec §4.1).
 *
 * <p>Input: byte 0 selects the buffer kind ({@link FuzzBuffers#fromInput}), the rest is the payload.
 *
 * <p>A finding (crash) is: any exception but {@link ProtocolException}; a ProtocolException other
 * than UNSUPPORTED_VERSION (exactly when at least 6 bytes are there and headerVersion is not 2) or
 * INVALID_REQUEST; a peek that consumes or disagrees with the bytes at its offset; a decoded header
 * whose headerVersion is not 2 or whose trafficClass is outside 0..3; a header that does not
 * re-encode to exactly the bytes it consumed; a changed writerIndex or reference count.
 */
public final class RequestHeaderTarget {
    private RequestHeaderTarget() {}

    public static void run(byte[] input) {
        try (FuzzBuffers bufs = new FuzzBuffers()) {
            ByteBuf payload = bufs.fromInput(input);
            requestHeader(payload, bufs);
            payload.readerIndex(0);
            responseHeader(payload, bufs);
        }
    }

    private static void requestHeader(ByteBuf payload, FuzzBuffers bufs) {
        int start = payload.readerIndex();
        int end = payload.writerIndex();
        int n = end - start;
        if (n >= 2) {
            check(RequestHeader.peekApiKey(payload) == payload.getShort(start), "peekApiKey disagrees with offset 0");
        } else {
            expectError(
                    () -> RequestHeader.peekApiKey(payload), Errors.INVALID_REQUEST, "peekApiKey of " + n + " bytes");
        }
        if (n >= Frames.MIN_ANSWERABLE_PAYLOAD) {
            check(
                    RequestHeader.peekCorrelationId(payload) == payload.getInt(start + 6),
                    "peekCorrelationId disagrees with offset 6");
        } else {
            expectError(
                    () -> RequestHeader.peekCorrelationId(payload),
                    Errors.INVALID_REQUEST,
                    "peekCorrelationId of " + n + " bytes");
        }
        check(payload.readerIndex() == start, "a peek moved the readerIndex");
        RequestHeader header;
        try {
            header = RequestHeader.read(payload);
        } catch (ProtocolException e) {
            boolean badVersion = n >= 6 && payload.getShort(start + RequestHeader.HEADER_VERSION_OFFSET) != 2;
            expectCode(e, badVersion ? Errors.UNSUPPORTED_VERSION : Errors.INVALID_REQUEST);
            check(payload.writerIndex() == end, "read moved the writerIndex");
            return;
        }
        check(
                header.headerVersion() == RequestHeader.HEADER_VERSION,
                "accepted headerVersion " + header.headerVersion());
        check(
                header.trafficClass() >= RequestHeader.TRAFFIC_CLASS_BASELINE
                        && header.trafficClass() <= RequestHeader.TRAFFIC_CLASS_CONTROL,
                "accepted trafficClass " + header.trafficClass());
        int consumed = payload.readerIndex() - start;
        check(consumed >= Frames.MIN_REQUEST_PAYLOAD && consumed <= n, "consumed " + consumed + " of " + n + " bytes");
        ByteBuf again = bufs.scratch();
        header.write(again);
        check(
                again.readableBytes() == consumed && ByteBufUtil.equals(again, 0, payload, start, consumed),
                "re-encoded header differs from the " + consumed + " bytes read");
        check(RequestHeader.read(again).equals(header), "re-read header differs");
    }

    private static void responseHeader(ByteBuf payload, FuzzBuffers bufs) {
        int n = payload.readableBytes();
        if (n < ResponseHeader.SIZE) {
            expectError(
                    () -> ResponseHeader.read(payload), Errors.INVALID_REQUEST, "response header of " + n + " bytes");
            return;
        }
        ResponseHeader header = ResponseHeader.read(payload);
        ByteBuf again = bufs.scratch();
        header.write(again);
        check(
                ByteBufUtil.equals(again, 0, payload, 0, ResponseHeader.SIZE),
                "re-encoded response header differs from the 12 bytes read");
    }
}
