package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The frame walk of {@link Lz4BlockDecompressor} on the layouts our writer does not make: frames of
 * the {@code lz4} tool with block checksums, 256 KiB to 4 MiB blocks, no content size, linked blocks
 * (refused, as lz4-java's frame stream refused them), several frames with a skippable frame between
 * them, and a content size that disagrees with the blocks. Skipped without Debian's {@code lz4} where the tool is needed.
 */
class Lz4BlockDecompressorTest {
    private static final long CAP = 16 << 20;

    @TempDir
    Path dir;

    private static byte[] sample(int bytes) {
        SplittableRandom random = new SplittableRandom(5);
        StringBuilder sb = new StringBuilder(bytes + 100);
        while (sb.length() < bytes) {
            sb.append("{\"user\":").append(random.nextInt(5_000)).append(",\"path\":\"/orders/");
            sb.append(random.nextInt(100_000))
                    .append("\",\"status\":")
                    .append(200 + random.nextInt(4))
                    .append("}\n");
        }
        return sb.substring(0, bytes).getBytes(StandardCharsets.US_ASCII);
    }

    private byte[] lz4Tool(byte[] data, String... flags) throws IOException, InterruptedException {
        boolean present = false;
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            present |= Files.isExecutable(Path.of(d, "lz4"));
        }
        assumeTrue(present, "'lz4' is not on the PATH: install Debian's lz4 package");
        Path in = dir.resolve("in");
        Path out = dir.resolve("out.lz4");
        Files.write(in, data);
        List<String> cmd = new ArrayList<>(List.of("lz4", "-q", "-f"));
        cmd.addAll(List.of(flags));
        cmd.addAll(List.of(in.toString(), out.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("%s: %s", cmd, output).isZero();
        return Files.readAllBytes(out);
    }

    /**
     * Our writer's frames (64 KiB blocks, no content checksum) read into chunks with room for a whole
     * block: each block is decoded straight into the chunk, stored ones (random bytes do not shrink)
     * copied straight in; the same bytes as through the block array (chunks under 64 KiB), into pooled
     * heap and direct chunks, and the cap still cuts mid-block.
     */
    @Test
    void blocksGoStraightIntoAChunkWithRoomForOneCompressedOrStored() {
        byte[] text = sample(700_000);
        byte[] noise = new byte[300_000];
        new SplittableRandom(9).nextBytes(noise);
        byte[] mixed = new byte[text.length + noise.length];
        System.arraycopy(text, 0, mixed, 0, text.length);
        System.arraycopy(noise, 0, mixed, text.length, noise.length);
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.LZ4);
                Decompressor d = codec.newDecompressor()) {
            byte[] frame = Streams.compress(codec, mixed);
            assertThat(storedBlocks(frame)).as("stored blocks in the frame").isPositive();
            for (boolean heap : new boolean[] {true, false}) {
                for (int chunk : new int[] {1 << 16, 1 << 17, 1 << 20, 1000}) {
                    Streams.Outcome out = Streams.decompress(d, frame, CAP, chunk, heap);
                    assertThat(out.code()).as("chunk %d heap %s", chunk, heap).isEqualTo(Decompressor.END_OF_STREAM);
                    assertThat(out.bytes()).isEqualTo(mixed);
                }
                int cap = text.length + 12_345; // inside a stored block
                Streams.Outcome over = Streams.decompress(d, frame, cap, 1 << 17, heap);
                assertThat(over.code()).isEqualTo(Decompressor.OVER_CAP);
                assertThat(over.bytes()).hasSize(cap).isEqualTo(Arrays.copyOf(mixed, cap));
            }
        }
    }

    /** Blocks of an LZ4 frame of ours (15-byte header: magic, FLG, BD, 8-byte content size, checksum) stored uncompressed. */
    private static int storedBlocks(byte[] frame) {
        ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        int pos = 4 + 2 + 8 + 1;
        int stored = 0;
        while (true) {
            int size = b.getInt(pos);
            if (size == 0) {
                return stored;
            }
            stored += size < 0 ? 1 : 0;
            pos += 4 + (size & 0x7FFFFFFF);
        }
    }

    private static Streams.Outcome decode(byte[] compressed, int chunkBytes) {
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.LZ4);
                Decompressor d = codec.newDecompressor()) {
            return Streams.decompress(d, compressed, CAP, chunkBytes);
        }
    }

    @Test
    void toolFramesWithEveryBlockLayoutDecode() throws Exception {
        byte[] data = sample(3 << 20);
        String[][] layouts = {
            {"-1"}, // 4 MiB blocks, independent, content checksum
            {"-9", "-B4", "-BX"}, // 64 KiB blocks with block checksums
            {"-B5", "--content-size"}, // 256 KiB blocks, content size in the header
            {"-B6", "--no-frame-crc"}, // 1 MiB blocks, no content checksum
        };
        for (String[] flags : layouts) {
            byte[] frame = lz4Tool(data, flags);
            for (int chunk : new int[] {1 << 16, 1000}) {
                Streams.Outcome out = decode(frame, chunk);
                assertThat(out.code())
                        .as("%s: %s", List.of(flags), out.failureReason())
                        .isEqualTo(Decompressor.END_OF_STREAM);
                assertThat(out.bytes()).as(List.of(flags).toString()).isEqualTo(data);
            }
        }
    }

    @Test
    void linkedBlocksAreMalformedWithTheReasonAsBefore() throws Exception {
        Streams.Outcome out = decode(lz4Tool(sample(300_000), "-B4", "-BD"), 1 << 16);
        assertThat(out.code()).isEqualTo(Decompressor.MALFORMED);
        assertThat(out.failureReason()).contains("linked blocks");
    }

    @Test
    void framesFollowEachOtherWithASkippableFrameBetween() {
        byte[] a = sample(100_000);
        byte[] b = "second frame".getBytes(StandardCharsets.US_ASCII);
        byte[] fa;
        byte[] fb;
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.LZ4)) {
            fa = Streams.compress(codec, a);
            fb = Streams.compress(codec, b);
        }
        ByteBuffer skippable = ByteBuffer.allocate(8 + 5).order(ByteOrder.LITTLE_ENDIAN);
        skippable.putInt(0x184D2A53).putInt(5).put(new byte[] {9, 9, 9, 9, 9});
        byte[] all = concat(fa, skippable.array(), fb);
        Streams.Outcome out = decode(all, 4096);
        assertThat(out.code()).as(out.failureReason()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.bytes()).isEqualTo(concat(a, b));
    }

    @Test
    void aCompressedBufferOfSeveralRegionsGoesThroughTheFrameStream() {
        byte[] data = sample(200_000);
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.LZ4);
                Decompressor d = codec.newDecompressor()) {
            byte[] frame = Streams.compress(codec, data);
            int half = frame.length / 2;
            CompositeByteBuf composite = Unpooled.compositeBuffer()
                    .addComponent(true, Unpooled.wrappedBuffer(frame, 0, half))
                    .addComponent(true, Unpooled.wrappedBuffer(frame, half, frame.length - half));
            ByteBuf chunk = Unpooled.buffer(1 << 16);
            ByteBuf out = Unpooled.buffer();
            try {
                d.reset(composite, CAP);
                int n;
                while ((n = d.read(chunk.clear())) > 0) {
                    out.writeBytes(chunk);
                }
                assertThat(n).as(d.failureReason()).isEqualTo(Decompressor.END_OF_STREAM);
                assertThat(ByteBufUtil.getBytes(out)).isEqualTo(data);
            } finally {
                composite.release();
                chunk.release();
                out.release();
            }
        }
    }

    @Test
    void aContentSizeThatDisagreesWithTheBlocksIsMalformed() {
        byte[] data = sample(10_000);
        byte[] frame;
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.LZ4)) {
            frame = Streams.compress(codec, data);
        }
        // Our writer puts the content size at bytes 6-13; change it and fix the header checksum.
        ByteBuffer f = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(f.get(4) & 0x08).as("content size flag").isNotZero();
        f.putLong(6, data.length + 1L);
        int hc = (net.jpountz.xxhash.XXHashFactory.fastestInstance().hash32().hash(frame, 4, 10, 0) >> 8) & 0xFF;
        frame[14] = (byte) hc;
        Streams.Outcome out = decode(frame, 4096);
        assertThat(out.code()).isEqualTo(Decompressor.MALFORMED);
        assertThat(out.failureReason()).contains("header says " + (data.length + 1));
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
