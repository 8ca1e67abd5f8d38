package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

/** {@link ProducerBufferPool}: what the recycling pool keeps, hands out again and frees. */
class ProducerBufferPoolTest {
    private static final int MIB = 1 << 20;

    @Test
    void aGivenBackBufferIsHandedOutAgainEmptyAndRoundedToWholeMebibytes() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(16L * MIB);
        ByteBuf a = pool.take(2_700_000);
        assertThat(a.capacity()).isEqualTo(3 * MIB);
        a.writeLong(42);
        pool.give(a);
        assertThat(a.refCnt()).isEqualTo(1);

        ByteBuf b = pool.take(2_500_000);
        assertThat(b).isSameAs(a);
        assertThat(b.readerIndex()).isZero();
        assertThat(b.writerIndex()).isZero();
        pool.give(b);
        pool.close();
        assertThat(a.refCnt()).isZero();
    }

    @Test
    void theSmallestIdleBufferThatFitsIsTakenAndOneTooSmallIsFreedForANewOne() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(16L * MIB);
        ByteBuf small = pool.take(MIB);
        ByteBuf large = pool.take(4 * MIB);
        pool.give(large);
        pool.give(small);

        ByteBuf got = pool.take(900_000);
        assertThat(got).isSameAs(small);
        pool.give(got);

        // Nothing idle holds 5 MiB: the largest idle buffer (too small) is freed, a new one made.
        ByteBuf bigger = pool.take(5 * MIB);
        assertThat(bigger.capacity()).isEqualTo(5 * MIB);
        assertThat(large.refCnt()).isZero();
        assertThat(small.refCnt()).isEqualTo(1);
        pool.give(bigger);
        pool.close();
        assertThat(small.refCnt()).isZero();
        assertThat(bigger.refCnt()).isZero();
    }

    @Test
    void aBufferStillHeldElsewhereIsReleasedNotRecycled() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(16L * MIB);
        ByteBuf a = pool.take(MIB);
        ByteBuf slice = a.retainedSlice(0, 8); // a request frame still writing it
        pool.give(a);
        assertThat(a.refCnt()).isEqualTo(1);
        ByteBuf b = pool.take(MIB);
        assertThat(b).isNotSameAs(a);
        slice.release();
        assertThat(a.refCnt()).isZero();
        pool.give(b);
        pool.close();
    }

    @Test
    void idleBuffersStayWithinTheLimitAndAfterCloseNothingIsKept() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(2L * MIB);
        ByteBuf a = pool.take(MIB);
        ByteBuf b = pool.take(MIB);
        ByteBuf c = pool.take(MIB);
        pool.give(a);
        pool.give(b);
        pool.give(c); // over 2 MiB idle: freed
        assertThat(a.refCnt()).isEqualTo(1);
        assertThat(b.refCnt()).isEqualTo(1);
        assertThat(c.refCnt()).isZero();

        pool.close();
        assertThat(a.refCnt()).isZero();
        assertThat(b.refCnt()).isZero();
        ByteBuf d = pool.take(MIB);
        pool.give(d);
        assertThat(d.refCnt()).isZero();
    }

    @Test
    void theAllocatorPoolAllocatesAndReleases() {
        ProducerBufferPool pool = ProducerBufferPool.of(UnpooledByteBufAllocator.DEFAULT);
        ByteBuf a = pool.take(1000);
        assertThat(a.capacity()).isGreaterThanOrEqualTo(1000);
        assertThat(pool.recycles()).isFalse();
        pool.give(a);
        assertThat(a.refCnt()).isZero();
    }
}
