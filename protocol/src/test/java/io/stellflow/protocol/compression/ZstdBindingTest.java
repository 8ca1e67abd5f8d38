package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * zstd-jni's two bindings: a JDK 22+ JVM loads the FFM classes of its multi-release jar, one started
 * with {@code -Djdk.util.jar.enableMultiRelease=false} (as {@code bin/} starts the client tools) the
 * JNI ones ({@code docs/compression.md}, "zstd-jni's two bindings"). The build runs this class, with
 * the zstd codec tests, once in each JVM (protocol's {@code pom.xml}, execution {@code
 * zstd-jni-classes}): the codec must behave the same on both.
 */
class ZstdBindingTest {
    /** A class only the FFM variant has. */
    private static final String FFM_ONLY_CLASS = "com.github.luben.zstd.ZstdBinding";

    private static boolean jniClassesExpected() {
        return "false".equals(System.getProperty("jdk.util.jar.enableMultiRelease"));
    }

    @Test
    void theJvmLoadsTheBindingItsMultiReleaseSettingChooses() {
        ClassLoader loader = ZstdBindingTest.class.getClassLoader();
        if (!jniClassesExpected()) {
            assertThat(Runtime.version().feature()).isGreaterThanOrEqualTo(22);
        }
        assertThat(loadable(FFM_ONLY_CLASS, loader))
                .as(jniClassesExpected() ? "JNI classes: no FFM binding class" : "FFM classes on JDK 22+")
                .isEqualTo(!jniClassesExpected());
    }

    @Test
    void bothPathsRoundTripIntoHeapAndDirectChunksAndTheCapHoldsOnThisBinding() {
        byte[] data = "{\"level\":\"INFO\",\"msg\":\"served\"}\n".repeat(20_000).getBytes(StandardCharsets.US_ASCII);
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD)) {
            byte[] oneShot = Streams.compress(codec, data); // direct buffers: one shot
            byte[] streamed = heapCompress(codec, data); // heap buffers: the stream
            for (byte[] frame : new byte[][] {oneShot, streamed}) {
                for (boolean heapChunk : new boolean[] {true, false}) {
                    try (Decompressor d = codec.newDecompressor()) {
                        Streams.Outcome all = Streams.decompress(d, frame, data.length, 8192, heapChunk);
                        assertThat(all.code()).isEqualTo(Decompressor.END_OF_STREAM);
                        assertThat(all.bytes()).isEqualTo(data);
                        Streams.Outcome capped = Streams.decompress(d, frame, data.length - 1, 8192, heapChunk);
                        assertThat(capped.code()).isEqualTo(Decompressor.OVER_CAP);
                    }
                }
            }
        }
    }

    private static byte[] heapCompress(CompressionCodec codec, byte[] data) {
        ByteBuf src = Unpooled.wrappedBuffer(data);
        ByteBuf dst = Unpooled.buffer(16);
        int n = codec.compress(src, dst);
        assertThat(n).isEqualTo(dst.readableBytes());
        return ByteBufUtil.getBytes(dst);
    }

    private static boolean loadable(String name, ClassLoader loader) {
        try {
            Class.forName(name, false, loader);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
