package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class FrameAssemblyTest {
    private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;

    @Test
    void collectsExactlyThePayloadAndLeavesTheRestOfTheInput() {
        FrameAssembly a = new FrameAssembly();
        a.start(alloc, 5);
        ByteBuf in1 = Unpooled.wrappedBuffer(new byte[] {1, 2, 3});
        assertThat(a.fill(in1)).isNull();
        assertThat(a.remainingBytes()).isEqualTo(2);
        ByteBuf in2 = Unpooled.wrappedBuffer(new byte[] {4, 5, 6, 7});
        ByteBuf done = a.fill(in2);
        assertThat(done.readableBytes()).isEqualTo(5);
        assertThat(done.capacity()).isEqualTo(5);
        assertThat(done.getByte(4)).isEqualTo((byte) 5);
        assertThat(in2.readableBytes())
                .as("bytes of the next frame stay in the input")
                .isEqualTo(2);
        assertThat(a.inProgress()).isFalse();
        done.release();
    }

    @Test
    void payloadsAboveTheUpfrontLimitStartSmallerAndGrowToTheirSize() {
        FrameAssembly a = new FrameAssembly();
        int size = FrameAssembly.MAX_UPFRONT_BYTES + 3;
        a.start(alloc, size);
        ByteBuf chunk = Unpooled.buffer(1 << 20).writeZero(1 << 20);
        ByteBuf done = null;
        while (done == null) {
            chunk.readerIndex(0);
            done = a.fill(chunk);
        }
        assertThat(done.readableBytes()).isEqualTo(size);
        assertThat(done.maxCapacity()).isEqualTo(size);
        done.release();
        chunk.release();
    }

    @Test
    void misuseIsRejectedAndReleaseIsIdempotent() {
        FrameAssembly a = new FrameAssembly();
        assertThatThrownBy(() -> a.start(alloc, 0)).isInstanceOf(IllegalArgumentException.class);
        a.start(alloc, 10);
        assertThatThrownBy(() -> a.start(alloc, 10)).isInstanceOf(IllegalStateException.class);
        a.release();
        a.release();
        assertThat(a.inProgress()).isFalse();
    }
}
