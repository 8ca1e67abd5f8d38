package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Misuse is an exception naming the problem; the expected outcomes are codes (other tests). */
class DecompressorContractTest {
    private static final byte[] DATA = "a record, a record, a record".getBytes(StandardCharsets.US_ASCII);

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void misuseThrowsAndLeavesTheInputAlone(CompressionType type) {
        CompressionCodec codec = CompressionCodecs.codec(type);
        byte[] compressed = Streams.compress(codec, DATA);
        ByteBuf in = Unpooled.wrappedBuffer(compressed);
        Decompressor d = codec.newDecompressor();
        assertThatThrownBy(() -> d.read(Unpooled.buffer(16)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("never reset");
        assertThatThrownBy(() -> d.reset(in, -1)).isInstanceOf(IllegalArgumentException.class);
        d.reset(in, 1 << 20);
        assertThatThrownBy(() -> d.read(Unpooled.buffer(0, 0))).isInstanceOf(IllegalArgumentException.class);
        CompositeByteBuf composite = Unpooled.compositeBuffer()
                .addComponent(true, Unpooled.buffer(8).writeZero(8))
                .addComponent(true, Unpooled.buffer(8).writeZero(8));
        composite.writerIndex(0);
        assertThatThrownBy(() -> d.read(composite)).isInstanceOf(IllegalArgumentException.class);
        composite.release();
        assertThat(in.readerIndex()).isZero();
        assertThat(in.refCnt()).isEqualTo(1);

        codec.close();
        codec.close(); // idempotent
        assertThatThrownBy(() -> Streams.compress(codec, DATA)).isInstanceOf(IllegalStateException.class);
        // a decompressor outlives its codec
        assertThat(Streams.decompress(d, compressed, DATA.length, 7).bytes()).isEqualTo(DATA);
        d.close();
        d.close();
        assertThatThrownBy(() -> d.reset(in, 10)).isInstanceOf(IllegalStateException.class);
        in.release();
    }
}
