package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Drives a response {@link FrameDecoder} the way a transport's read loop does on a client's or a
 * follower's connection (allocate from the channel's {@link FrameReadAllocator} handle, let the
 * "kernel" write up to the buffer's writable bytes, fire it), and checks the responses and which
 * bytes were copied.
 */
class ResponseFrameReadAllocatorTest extends FrameReadLoop {
    ResponseFrameReadAllocatorTest() {
        super(FrameDecoder.forResponses());
    }

    private void frame(int payloadBytes, SplittableRandom random) {
        byte[] payload = new byte[payloadBytes];
        random.nextBytes(payload);
        frames.add(Unpooled.buffer(4 + payloadBytes).writeInt(payloadBytes).writeBytes(payload));
    }

    @Test
    void aFourMebibyteFetchResponseIsReadStraightIntoItsBuffer() {
        frame(4 << 20, new SplittableRandom(1));
        frame(30, new SplittableRandom(2));
        ByteBuf stream = stream();
        read(stream, 1000);
        assertThat(decoder.copiedPayloadBytes())
                .as("the prefix read's payload bytes")
                .isEqualTo(996);
        int reads = 0;
        while (stream.isReadable()) {
            read(stream, 65_536);
            reads++;
        }
        stream.release();
        assertThat(reads).isGreaterThan(60);
        assertThat(decoder.inPlacePayloadBytes())
                .as("every later byte of the large response")
                .isEqualTo((4 << 20) - 996);
        assertThat(decoder.copiedPayloadBytes())
                .as("plus the small response, which arrived with its prefix")
                .isEqualTo(996);
        assertPayloads();
    }

    @Test
    void responsesCutAtRandomPlacesComeOutWholeAndLargeOnesMostlyInPlace() {
        SplittableRandom random = new SplittableRandom(7);
        int[] sizes = {0, 5, 1 << 20, 3, 200_000, FrameAssembly.MAX_UPFRONT_BYTES + 10, 1, 70_000};
        for (int size : sizes) {
            frame(size, random);
        }
        ByteBuf stream = stream();
        while (stream.isReadable()) {
            read(stream, 1 + random.nextInt(random.nextBoolean() ? 6 : 150_000));
        }
        stream.release();
        assertPayloads();
        assertThat(decoder.inPlacePayloadBytes()).isGreaterThan(FrameAssembly.MAX_UPFRONT_BYTES);
        long assembled = decoder.copiedPayloadBytes() + decoder.inPlacePayloadBytes();
        assertThat(assembled)
                .as("responses larger than any read (1 MiB, 200,000 B, 8 MiB + 10) went through the assembly,"
                        + " each byte copied once or read in place; small ones may arrive whole and be sliced")
                .isBetween((1L << 20) + 200_000 + FrameAssembly.MAX_UPFRONT_BYTES + 10, sum(sizes));
        assertThat(decoder.copiedPayloadBytes())
                .as("only reads that carried a length prefix (at most 150,000 B each), and one growth above 8 MiB")
                .isLessThan(sizes.length * 150_000L + FrameAssembly.MAX_UPFRONT_BYTES / 2);
    }

    private static long sum(int[] sizes) {
        long total = 0;
        for (int size : sizes) {
            total += size;
        }
        return total;
    }
}
