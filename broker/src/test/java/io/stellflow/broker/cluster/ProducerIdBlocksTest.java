package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.ErrorCode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link ProducerIdBlocks}: blocks fetched ahead (at join, and at the last tenth of a block) so an
 * InitProducerId does not wait for the controller; the synchronous fallback when none was; ids unique.
 */
class ProducerIdBlocksTest {
    private static final int BLOCK = 10;

    /** A controller handing out consecutive blocks of {@link #BLOCK}, counting its calls. */
    private static final class FakeController
            implements Function<AllocateProducerIdsRequest, AllocateProducerIdsResponse> {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicLong nextFirst = new AtomicLong(1000);
        final AtomicBoolean unavailable = new AtomicBoolean();
        final AtomicBoolean closed = new AtomicBoolean();

        @Override
        public AllocateProducerIdsResponse apply(AllocateProducerIdsRequest request) {
            calls.incrementAndGet();
            if (unavailable.get()) {
                throw new ControllerUnavailableException("no controller", null);
            }
            if (closed.get()) {
                throw new IllegalStateException("controller client closed");
            }
            return AllocateProducerIdsResponse.newBuilder()
                    .setError(ErrorCode.NONE)
                    .setFirstProducerId(nextFirst.getAndAdd(BLOCK))
                    .setBlockSize(BLOCK)
                    .build();
        }
    }

    private final FakeController controller = new FakeController();
    private final Queue<Runnable> held = new ArrayDeque<>();
    private final AtomicLong epoch = new AtomicLong(7);
    private final ProducerIdBlocks blocks = new ProducerIdBlocks(1, epoch::get, controller, held::add);

    @Test
    void theBlockFetchedAtJoinServesTheFirstProducerWithoutAControllerCall() {
        blocks.fetchAhead();
        blocks.fetchAhead(); // one fetch at a time
        assertThat(held).hasSize(1);
        held.poll().run();
        assertThat(controller.calls).hasValue(1);

        assertThat(blocks.nextProducerId()).isEqualTo(1000);
        assertThat(controller.calls).as("served from the block fetched ahead").hasValue(1);
    }

    @Test
    void theNextBlockIsFetchedAtTheLastTenthAndTakenWhenTheCurrentOneEnds() {
        blocks.fetchAhead();
        held.poll().run();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < BLOCK - 2; i++) {
            ids.add(blocks.nextProducerId());
        }
        assertThat(held).as("nothing fetched before the last tenth").isEmpty();
        ids.add(blocks.nextProducerId()); // one id left of ten: the last tenth
        assertThat(held).hasSize(1);
        held.poll().run();
        assertThat(blocks.hasBlockAhead()).isTrue();
        assertThat(controller.calls).hasValue(2);

        ids.add(blocks.nextProducerId()); // the current block's last
        ids.add(blocks.nextProducerId()); // the first of the block fetched ahead
        assertThat(controller.calls).as("the next block was there already").hasValue(2);
        assertThat(ids).containsExactly(1000L, 1001L, 1002L, 1003L, 1004L, 1005L, 1006L, 1007L, 1008L, 1009L, 1010L);
        assertThat(blocks.hasBlockAhead()).isFalse();
    }

    @Test
    void withoutABlockFetchedAheadTheCallAsksTheControllerItself() {
        // The fetch ahead never runs (say its thread is slow): the caller does not wait for it.
        blocks.fetchAhead();
        assertThat(blocks.nextProducerId()).isEqualTo(1000);
        assertThat(controller.calls).hasValue(1);
        // The late fetch then lands as the block ahead: no id is handed out twice.
        held.poll().run();
        Set<Long> ids = new HashSet<>();
        ids.add(1000L);
        for (int i = 0; i < 3 * BLOCK; i++) {
            assertThat(ids.add(blocks.nextProducerId())).isTrue();
        }
    }

    @Test
    void anUnavailableControllerLeavesTheFetchToTheNextCallAndRecovers() {
        controller.unavailable.set(true);
        blocks.fetchAhead();
        held.poll().run();
        assertThat(blocks.hasBlockAhead()).isFalse();
        assertThat(blocks.nextProducerId()).isEqualTo(ProducerIdBlocks.NONE);

        controller.unavailable.set(false);
        assertThat(blocks.nextProducerId()).isEqualTo(1000);
        blocks.fetchAhead(); // a failed fetch does not block the next one
        assertThat(held).hasSize(1);
    }

    @Test
    void aFetchAheadThatFailsOtherwiseEndsQuietlyAndCanBeStartedAgain() {
        controller.closed.set(true); // a broker shutting down: its controller client closed
        blocks.fetchAhead();
        held.poll().run(); // does not throw on the fetching thread
        assertThat(blocks.hasBlockAhead()).isFalse();
        controller.closed.set(false);
        blocks.fetchAhead();
        held.poll().run();
        assertThat(blocks.nextProducerId()).isEqualTo(1000);
        assertThat(controller.calls).hasValue(2);
    }

    @Test
    void nothingIsFetchedBeforeTheBrokerRegistered() {
        epoch.set(-1);
        blocks.fetchAhead();
        assertThat(held).isEmpty();
        assertThat(blocks.nextProducerId()).isEqualTo(ProducerIdBlocks.NONE);
        assertThat(controller.calls).hasValue(0);
    }

    @Test
    void idsAreUniqueAcrossThreadsWithRealFetchesAhead() throws Exception {
        ProducerIdBlocks real = new ProducerIdBlocks(1, epoch::get, controller);
        real.fetchAhead();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<Long>>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                futures.add(pool.submit(() -> {
                    List<Long> mine = new ArrayList<>();
                    for (int i = 0; i < 500; i++) {
                        mine.add(real.nextProducerId());
                    }
                    return mine;
                }));
            }
            Set<Long> all = new HashSet<>();
            for (Future<List<Long>> f : futures) {
                for (long id : f.get()) {
                    assertThat(id).isGreaterThanOrEqualTo(1000);
                    assertThat(all.add(id)).as("id %d handed out twice", id).isTrue();
                }
            }
            assertThat(all).hasSize(2000);
        } finally {
            pool.shutdownNow();
        }
    }
}
