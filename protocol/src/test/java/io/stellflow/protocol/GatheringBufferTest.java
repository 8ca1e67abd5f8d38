package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.internal.PlatformDependent;
import io.stellflow.protocol.message.ProduceRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A request written into a {@link GatheringBuffer} carries exactly the bytes of the same
 * request written into a plain buffer, holds its large records buffers as retained slices (the same
 * memory, not a copy) and gives them back when released.
 */
class GatheringBufferTest {
    private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;

    private ByteBuf records(int bytes, SplittableRandom random) {
        byte[] b = new byte[bytes];
        random.nextBytes(b);
        return alloc.directBuffer(bytes).writeBytes(b);
    }

    private static byte[] bytes(ByteBuf buf) {
        return ByteBufUtil.getBytes(buf, buf.readerIndex(), buf.readableBytes());
    }

    @Test
    void aProduceRequestGoesOutByteForByteWithItsLargeBatchesNotCopied() {
        SplittableRandom random = new SplittableRandom(5);
        ByteBuf big1 = records(1 << 20, random);
        ByteBuf small = records(GatheringBuffer.MIN_APPEND_BYTES - 1, random);
        ByteBuf big2 = records(GatheringBuffer.MIN_APPEND_BYTES, random);
        ByteBuf big3 = records(300_000, random);
        ProduceRequest request = new ProduceRequest(
                null,
                (short) -1,
                30_000,
                List.of(
                        new ProduceRequest.TopicData(
                                "orders",
                                List.of(
                                        new ProduceRequest.PartitionData(0, big1),
                                        new ProduceRequest.PartitionData(1, small),
                                        new ProduceRequest.PartitionData(2, null),
                                        new ProduceRequest.PartitionData(3, big2))),
                        new ProduceRequest.TopicData(
                                "t".repeat(249), List.of(new ProduceRequest.PartitionData(7, big3)))));
        ByteBuf plain = alloc.directBuffer();
        GatheringBuffer gather = GatheringBuffer.direct(alloc);
        try {
            plain.writeInt(0);
            gather.writeInt(0);
            RequestHeader.of(ApiKeys.PRODUCE, (short) 1, 42, "perf-client").write(plain);
            RequestHeader.of(ApiKeys.PRODUCE, (short) 1, 42, "perf-client").write(gather);
            request.write(plain);
            request.write(gather);
            plain.setInt(0, plain.writerIndex() - 4);
            gather.setInt(0, gather.writerIndex() - 4);

            assertThat(bytes(gather)).as("the same bytes on the wire").isEqualTo(bytes(plain));
            assertThat(gather.capacity() - gather.writerIndex())
                    .as("growth after a batch adds the missing bytes and some room, not a doubling of the frame")
                    .isLessThanOrEqualTo(GatheringBuffer.ROOM_BYTES);
            for (ByteBuf large : List.of(big1, big2, big3)) {
                assertThat(large.refCnt()).as("held, not copied").isEqualTo(2);
            }
            assertThat(small.refCnt()).as("below MIN_APPEND_BYTES: copied").isEqualTo(1);
            List<Long> addresses = new ArrayList<>();
            for (ByteBuffer nio : gather.nioBuffers(gather.readerIndex(), gather.readableBytes())) {
                if (nio.isDirect() && nio.remaining() >= GatheringBuffer.MIN_APPEND_BYTES) {
                    addresses.add(PlatformDependent.directBufferAddress(nio));
                }
            }
            assertThat(addresses)
                    .as("what a gathering write sends for the large batches is their own memory")
                    .containsExactly(big1.memoryAddress(), big2.memoryAddress(), big3.memoryAddress());
            // Decoding what was written gives the request back (a contiguous copy, as the broker reads it).
            ByteBuf wire = alloc.directBuffer(gather.readableBytes())
                    .writeBytes(gather, gather.readerIndex(), gather.readableBytes());
            try {
                wire.skipBytes(4);
                RequestHeader.read(wire);
                ProduceRequest back = ProduceRequest.read(wire);
                assertThat(bytes(back.topicData().get(0).partitions().get(0).records()))
                        .isEqualTo(bytes(big1));
                assertThat(back.topicData().get(1).topic()).hasSize(249);
            } finally {
                wire.release();
            }
        } finally {
            plain.release();
            gather.release();
        }
        for (ByteBuf b : List.of(big1, small, big2, big3)) {
            assertThat(b.refCnt()).as("the request gave every batch back").isEqualTo(1);
            b.release();
        }
    }

    @Test
    void anEmptyGatheringBufferTakesSmallWritesLikeAnyBuffer() {
        GatheringBuffer gather = GatheringBuffer.direct(alloc);
        try {
            for (int i = 0; i < 1000; i++) {
                gather.writeInt(i);
            }
            assertThat(gather.readableBytes()).isEqualTo(4000);
            assertThat(gather.getInt(3996)).isEqualTo(999);
        } finally {
            gather.release();
        }
    }
}
