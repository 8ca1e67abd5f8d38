package io.stellflow.protocol;

import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Strict decoding of the primitive types ({@code docs/spec/wire-protocol.md} §2). */
class WireReaderTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    @Test
    void boolAcceptsOnlyZeroAndOne() {
        assertThat(WireReader.readBool(bufs.hex("00"), "b")).isFalse();
        assertThat(WireReader.readBool(bufs.hex("01"), "b")).isTrue();
        for (String bad : new String[] {"02", "ff", "80"}) {
            assertProtocolError(() -> WireReader.readBool(bufs.hex(bad), "b"), Errors.INVALID_REQUEST);
        }
    }

    @Test
    void invalidUtf8IsRejected() {
        String[] invalid = {
            "0002c328", // bad continuation
            "0002c0af", // overlong '/'
            "0003eda080", // UTF-16 surrogate D800
            "0001ff", // never valid
            "0002e282", // truncated 3-byte sequence
            "0004f4908080" // above U+10FFFF
        };
        for (String hex : invalid) {
            assertProtocolError(() -> WireReader.readNullableString(bufs.hex(hex), "s"), Errors.INVALID_REQUEST);
        }
        assertThat(WireReader.readString(bufs.hex("0004f09f9880"), "s")).isEqualTo("\uD83D\uDE00");
        assertThat(WireReader.readString(bufs.hex("0003e282ac"), "s")).isEqualTo("€");
    }

    @Test
    void invalidUtf8IsRejectedInDirectAndCompositeBuffersToo() {
        ByteBuf heap = bufs.hex("0006616263c32864");
        assertProtocolError(() -> WireReader.readString(bufs.directCopy(heap), "s"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readString(bufs.composite(heap, 4), "s"), Errors.INVALID_REQUEST);
        ByteBuf good = bufs.hex("0004616263e2");
        good.setByte(5, 'd');
        assertThat(WireReader.readString(bufs.composite(good, 3), "s")).isEqualTo("abcd");
    }

    @Test
    void stringLengthsFollowTheNullRules() {
        assertThat(WireReader.readNullableString(bufs.hex("ffff"), "s")).isNull();
        assertThat(WireReader.readNullableString(bufs.hex("0000"), "s")).isEmpty();
        assertProtocolError(() -> WireReader.readString(bufs.hex("ffff"), "s"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readNullableString(bufs.hex("fffe"), "s"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readNullableString(bufs.hex("8000"), "s"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readNullableString(bufs.hex("000361"), "s"), Errors.INVALID_REQUEST);
    }

    @Test
    void bytesLengthsFollowTheNullRulesAndReturnSlices() {
        assertThat(WireReader.readNullableBytes(bufs.hex("ffffffff"), "b")).isNull();
        assertProtocolError(() -> WireReader.readBytes(bufs.hex("ffffffff"), "b"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readNullableBytes(bufs.hex("fffffffe"), "b"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readNullableBytes(bufs.hex("0000000501"), "b"), Errors.INVALID_REQUEST);
        ByteBuf source = bufs.hex("00000002abcd99");
        ByteBuf slice = WireReader.readBytes(source, "b");
        assertThat(Bufs.hexOf(slice)).isEqualTo("abcd");
        assertThat(slice.refCnt()).isEqualTo(1);
        source.setByte(4, 0x11);
        assertThat(slice.getByte(slice.readerIndex())).as("a slice, not a copy").isEqualTo((byte) 0x11);
        assertThat(source.readableBytes()).isEqualTo(1);
    }

    @Test
    void arrayCountsMustBeNonNegativeAndPlausible() {
        assertProtocolError(() -> WireReader.readInt32Array(bufs.hex("ffffffff"), "a"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readInt32Array(bufs.hex("80000000"), "a"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readInt32Array(bufs.hex("7fffffff00"), "a"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readInt32Array(bufs.hex("0000000200000001"), "a"), Errors.INVALID_REQUEST);
        assertThat(WireReader.readInt32Array(bufs.hex("0000000200000001ffffffff"), "a"))
                .containsExactly(1, -1);
        assertThat(WireReader.readInt64Array(bufs.hex("00000000"), "a")).isEmpty();
        assertProtocolError(() -> WireReader.readStringArray(bufs.hex("00000001ffff"), "a"), Errors.INVALID_REQUEST);
    }

    @Test
    void shortPrimitivesAndTrailingBytesAreRejected() {
        assertProtocolError(() -> WireReader.readInt16(bufs.hex("01"), "x"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readInt32(bufs.hex("010203"), "x"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readInt64(bufs.hex("01020304050607"), "x"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.readInt8(bufs.hex(""), "x"), Errors.INVALID_REQUEST);
        assertProtocolError(() -> WireReader.ensureFullyRead(bufs.hex("00"), "x"), Errors.INVALID_REQUEST);
        WireReader.ensureFullyRead(bufs.hex(""), "x");
    }

    @Test
    void writerRejectsValuesTheWireCannotCarry() {
        ByteBuf out = bufs.heap();
        assertThatThrownBy(() -> WireWriter.writeString(out, null, "topic"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("topic");
        assertThatThrownBy(() -> WireWriter.writeNullableString(out, "x".repeat(32768)))
                .isInstanceOf(IllegalArgumentException.class);
        WireWriter.writeNullableString(out, "é".repeat(16383)); // 32766 bytes
        assertThat(out.readableBytes()).isEqualTo(2 + 32766);
        WireWriter.writeStringArray(out.clear(), List.of("a", ""), "f");
        assertThat(Bufs.hexOf(out)).isEqualTo("00000002000161" + "0000");
    }
}
