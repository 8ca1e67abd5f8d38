package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The chunk walk of {@link SnappyChunkDecompressor} on framings our writer does not make (skippable
 * and reserved chunks, a missing identifier, an identifier repeated between chunks) and the
 * framed-stream fallback for heap input; the golden vectors, round trips and fuzzing of the codec
 * layer cover compressed and uncompressed chunks and their checksums.
 */
class SnappyChunkDecompressorTest {
    private static final long CAP = 1 << 20;
    private static final byte[] DATA = "snappy chunk walk, snappy chunk walk, snappy chunk walk\n"
            .repeat(3000)
            .getBytes(StandardCharsets.US_ASCII);

    private static byte[] framed(byte[] data) {
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.SNAPPY)) {
            return Streams.compress(codec, data);
        }
    }

    private static Streams.Outcome decode(byte[] stream) {
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.SNAPPY)) {
            return Streams.decompress(codec, stream, CAP);
        }
    }

    private static byte[] chunk(int type, byte[] body) {
        byte[] c = new byte[4 + body.length];
        c[0] = (byte) type;
        c[1] = (byte) body.length;
        c[2] = (byte) (body.length >>> 8);
        c[3] = (byte) (body.length >>> 16);
        System.arraycopy(body, 0, c, 4, body.length);
        return c;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void skippableChunksAndARepeatedIdentifierAreSkipped() {
        byte[] stream = framed(DATA);
        byte[] identifier = Arrays.copyOf(stream, 10);
        byte[] withExtras = concat(
                concat(concat(identifier, chunk(0xfe, new byte[7])), chunk(0x80, new byte[3])),
                Arrays.copyOfRange(stream, 10, stream.length));
        withExtras = concat(withExtras, identifier);
        Streams.Outcome out = decode(withExtras);
        assertThat(out.code()).as(out.failureReason()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.bytes()).isEqualTo(DATA);
    }

    @Test
    void reservedChunksAndAMissingIdentifierAreMalformed() {
        byte[] stream = framed(DATA);
        Streams.Outcome reserved = decode(concat(stream, chunk(0x02, new byte[4])));
        assertThat(reserved.code()).isEqualTo(Decompressor.MALFORMED);
        assertThat(reserved.failureReason()).contains("reserved");
        Streams.Outcome noIdentifier = decode(Arrays.copyOfRange(stream, 10, stream.length));
        assertThat(noIdentifier.code()).isEqualTo(Decompressor.MALFORMED);
        byte[] badLength = stream.clone();
        badLength[10 + 1] = (byte) 0xff; // the first data chunk's length past the end
        badLength[10 + 2] = (byte) 0xff;
        assertThat(decode(badLength).code()).isEqualTo(Decompressor.MALFORMED);
    }

    @Test
    void heapInputGoesThroughTheFramedStream() {
        byte[] stream = framed(DATA);
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.SNAPPY);
                Decompressor d = codec.newDecompressor()) {
            ByteBuf heap = Unpooled.wrappedBuffer(stream);
            ByteBuf chunk = Unpooled.directBuffer(4096, 4096);
            ByteBuf out = Unpooled.buffer();
            try {
                d.reset(heap, CAP);
                int n;
                while ((n = d.read(chunk.clear())) > 0) {
                    out.writeBytes(chunk);
                }
                assertThat(n).as(d.failureReason()).isEqualTo(Decompressor.END_OF_STREAM);
                assertThat(ByteBufUtil.getBytes(out)).isEqualTo(DATA);
            } finally {
                heap.release();
                chunk.release();
                out.release();
            }
        }
    }
}
