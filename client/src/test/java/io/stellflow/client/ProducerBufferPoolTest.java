package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ProducerBufferPool}: what the recycling pool keeps, hands out again and frees. */
class ProducerBufferPoolTest {
    private static final int MIB = 1 << 20;
    private static final int KIB = 1 << 10;

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
    void outstandingBuffersCountsTakesLessGivesWhetherKeptOrReleased() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(MIB);
        ByteBuf a = pool.take(MIB);
        ByteBuf b = pool.take(MIB);
        assertThat(pool.outstandingBuffers()).isEqualTo(2);
        pool.give(a); // kept idle
        pool.give(b); // over the idle limit: released
        assertThat(pool.outstandingBuffers()).isZero();
        ByteBuf c = pool.take(MIB); // a again
        pool.close();
        pool.give(c); // after close: released
        assertThat(pool.outstandingBuffers()).isZero();
        assertThat(ProducerBufferPool.of(UnpooledByteBufAllocator.DEFAULT).outstandingBuffers())
                .isEqualTo(-1);
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
    void requestsUpTo1MiBGetPowerOfTwoCapacitiesFrom4KiBAndAreReused() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(16L * MIB);
        int[][] askedAndCapacity = {
            {1, 4 * KIB},
            {4 * KIB, 4 * KIB},
            {4 * KIB + 1, 8 * KIB},
            {16 * KIB, 16 * KIB},
            {16 * KIB + 61, 32 * KIB},
            {700_000, MIB},
            {MIB, MIB},
            {MIB + 1, 2 * MIB},
        };
        List<ByteBuf> taken = new ArrayList<>();
        for (int[] c : askedAndCapacity) {
            ByteBuf b = pool.take(c[0]);
            assertThat(b.capacity()).as("capacity for %d bytes", c[0]).isEqualTo(c[1]);
            taken.add(b);
        }
        taken.forEach(pool::give);
        for (int[] c : askedAndCapacity) {
            ByteBuf b = pool.take(c[0]);
            assertThat(b.capacity()).as("reused for %d bytes", c[0]).isEqualTo(c[1]);
            assertThat(taken)
                    .as("reused for %d bytes", c[0])
                    .anySatisfy(t -> assertThat(t).isSameAs(b));
        }
        assertThat(pool.allocatedBuffers()).isEqualTo(askedAndCapacity.length);
        pool.close();
    }

    @Test
    void aDefaultBatchSizeBufferPinsOnly16KiBAndTheIdleLimitCountsThat() {
        // buffer.memory of 64 KiB holds four default batches idle, not one (nor none) of 1 MiB each.
        ProducerBufferPool pool = ProducerBufferPool.recycling(64L * KIB);
        List<ByteBuf> batches = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ByteBuf b = pool.take(16 * KIB);
            assertThat(b.capacity()).isEqualTo(16 * KIB);
            batches.add(b);
        }
        batches.forEach(pool::give);
        for (int i = 0; i < 4; i++) {
            assertThat(batches.get(i).refCnt()).isEqualTo(1); // idle
        }
        assertThat(batches.get(4).refCnt()).isZero(); // over the limit: freed
        for (int i = 0; i < 4; i++) {
            ByteBuf b = pool.take(16 * KIB);
            assertThat(batches.subList(0, 4)).anySatisfy(t -> assertThat(t).isSameAs(b));
        }
        pool.close();
    }

    @Test
    void amongThousandsOfIdleBuffersTheSmallestThatFitsIsTaken() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(1L << 30);
        List<ByteBuf> small = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            ByteBuf b = pool.take(4 * KIB);
            assertThat(b.capacity()).isEqualTo(4 * KIB);
            small.add(b);
        }
        ByteBuf mid = pool.take(16 * KIB);
        ByteBuf large = pool.take(64 * KIB);
        // Given back interleaved, so no order of the idle buffers happens to put the fit first.
        for (int i = 0; i < small.size(); i++) {
            pool.give(small.get(i));
            if (i == 2_500) {
                pool.give(large);
                pool.give(mid);
            }
        }

        ByteBuf got = pool.take(10 * KIB);
        assertThat(got).isSameAs(mid);
        ByteBuf next = pool.take(10 * KIB);
        assertThat(next).isSameAs(large);
        for (int i = 0; i < 5_000; i++) {
            ByteBuf b = pool.take(3 * KIB);
            assertThat(b.capacity()).isEqualTo(4 * KIB);
        }
        ByteBuf fresh = pool.take(4 * KIB); // none idle any more: a new one
        assertThat(small).noneSatisfy(t -> assertThat(t).isSameAs(fresh));
        pool.give(got);
        pool.give(next);
        pool.give(fresh);
        small.forEach(pool::give);
        pool.close();
        assertThat(small).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        assertThat(List.of(got, next, fresh))
                .allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    @Test
    void withNoSmallIdleBufferLargeEnoughTheLargestIsFreedAndTheOthersKept() {
        ProducerBufferPool pool = ProducerBufferPool.recycling(16L * MIB);
        ByteBuf a = pool.take(8 * KIB);
        ByteBuf b = pool.take(16 * KIB);
        ByteBuf c = pool.take(16 * KIB);
        pool.give(a);
        pool.give(b);
        pool.give(c);

        ByteBuf big = pool.take(20 * KIB);
        assertThat(big.capacity()).isEqualTo(32 * KIB);
        // One of the two largest (16 KiB) idle buffers was freed; the other and the 8 KiB one stay.
        assertThat(b.refCnt() + c.refCnt()).isEqualTo(1);
        assertThat(a.refCnt()).isEqualTo(1);
        ByteBuf kept = b.refCnt() == 1 ? b : c;
        assertThat(pool.take(9 * KIB)).isSameAs(kept);
        assertThat(pool.take(5 * KIB)).isSameAs(a);
        pool.give(a);
        pool.give(kept);
        pool.give(big);
        pool.close();
        assertThat(List.of(a, kept, big)).allSatisfy(x -> assertThat(x.refCnt()).isZero());
        ByteBuf after = pool.take(16 * KIB);
        pool.give(after);
        assertThat(after.refCnt()).isZero();
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
