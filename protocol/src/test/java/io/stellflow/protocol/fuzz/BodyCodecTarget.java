package io.stellflow.protocol.fuzz;

import static io.stellflow.protocol.fuzz.Oracle.check;
import static io.stellflow.protocol.fuzz.Oracle.expectCode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.message.ApiMessage;

/**
 * Fuzz target of one {@link BodyCodec}: decode arbitrary bytes as that body, then re-encode.
 *
 * <p>Input: byte 0 selects the buffer kind ({@link FuzzBuffers#fromInput}), the rest is the body.
 *
 * <p>A finding (crash) is: any exception from {@code read} but {@link ProtocolException}
 * INVALID_REQUEST (the codecs' one documented decode error; an IndexOutOfBoundsException from the
 * buffer is a crash); a decoded body that leaves bytes unread; a decoded body breaking the
 * request-level ranges {@code read} enforces; a re-encoding that differs from the input (for the
 * codecs that must re-encode exactly) or that does not decode to an equal body; a record set inside
 * that fails {@link RecordSetTarget#checkSet}; a changed reference count.
 */
public final class BodyCodecTarget {
    private BodyCodecTarget() {}

    /** The target of {@code codec}. */
    public static FuzzTarget of(BodyCodec codec) {
        return input -> run(codec, input);
    }

    public static void run(BodyCodec codec, byte[] input) {
        try (FuzzBuffers bufs = new FuzzBuffers()) {
            ByteBuf body = bufs.fromInput(input);
            int start = body.readerIndex();
            int length = body.readableBytes();
            ApiMessage m;
            try {
                m = codec.reader.apply(body);
            } catch (ProtocolException e) {
                expectCode(e, Errors.INVALID_REQUEST);
                return;
            }
            check(!body.isReadable(), codec + ": " + body.readableBytes() + " bytes left after read");
            codec.postconditions.accept(m);
            ByteBuf again = bufs.scratch();
            codec.writer.accept(m, again);
            if (codec.reencodesExactly.test(m)) {
                check(
                        again.readableBytes() == length && ByteBufUtil.equals(again, 0, body, start, length),
                        codec + ": re-encoding differs from the " + length + " bytes decoded");
            }
            ApiMessage reread = codec.reader.apply(again.duplicate());
            ByteBuf third = bufs.scratch();
            codec.writer.accept(reread, third);
            check(ByteBufUtil.equals(again, third), codec + ": re-encoding is not stable");
            if (codec.reencodesExactly.test(m)) {
                check(reread.equals(m), codec + ": re-decoded body differs");
            }
        }
    }
}
