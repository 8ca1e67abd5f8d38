package io.stellflow.broker.cluster;

import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.ErrorCode;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producer ids this broker hands to idempotent producers (InitProducerId): one block of 1000 at a
 * time from the controller (AllocateProducerIds, committed as a metadata record, so ids are unique in
 * the cluster and never reused, also after a controller failover or a broker restart: a restarted
 * broker takes a new block and abandons the rest of its old one).
 *
 * <p>Blocks are fetched ahead ({@link #fetchAhead}, as Kafka's brokers prefetch theirs): the first once
 * the broker has joined its cluster, the next when the current one is down to its last tenth, each on a
 * thread of its own, so an InitProducerId does not wait for a metadata commit (tens of ms, more while
 * the disk of the controller's log is busy) and does not hold the request's thread meanwhile. Only
 * when no block was fetched ahead (the controller was unavailable, or 100 producers came faster than
 * one commit) does {@link #nextProducerId} ask the controller itself. A block fetched ahead and never
 * used is abandoned at shutdown like the rest of a current one (ids are 64-bit).
 *
 * <p>Thread-safety: synchronized; a call that needs a block nobody fetched ahead waits for the
 * controller, the others wait for it. The controller call of a fetch ahead runs outside the lock.
 */
public final class ProducerIdBlocks {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerIdBlocks.class);

    /** {@link #nextProducerId}: no block could be had from the controller now; ask again later. */
    public static final long NONE = -1L;

    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final Function<AllocateProducerIdsRequest, AllocateProducerIdsResponse> allocate;
    private final Executor aheadExecutor;

    /** Guarded by this: the next id of the current block, and the end of the block (exclusive). */
    private long next;

    private long end;

    /** Guarded by this: ids left in the current block when it was taken, for the fetch-ahead mark. */
    private long blockSize;

    /** Guarded by this: a block fetched ahead, [aheadFirst, aheadEnd); aheadEnd 0 when none. */
    private long aheadFirst;

    private long aheadEnd;

    /** Guarded by this: a fetch ahead is running. */
    private boolean fetchingAhead;

    /**
     * Fetches ahead on a new virtual thread per block.
     *
     * @param brokerEpoch this broker's current epoch (-1 before it registered)
     * @param allocate the control-plane call ({@code ControllerClient::allocateProducerIds})
     */
    public ProducerIdBlocks(
            int brokerId,
            LongSupplier brokerEpoch,
            Function<AllocateProducerIdsRequest, AllocateProducerIdsResponse> allocate) {
        this(
                brokerId,
                brokerEpoch,
                allocate,
                task -> Thread.ofVirtual()
                        .name("sf-producer-id-block-" + brokerId)
                        .start(task));
    }

    /**
     * @param aheadExecutor runs each fetch ahead (one task per block; tests pass a direct or a held
     *     one)
     */
    public ProducerIdBlocks(
            int brokerId,
            LongSupplier brokerEpoch,
            Function<AllocateProducerIdsRequest, AllocateProducerIdsResponse> allocate,
            Executor aheadExecutor) {
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.allocate = allocate;
        this.aheadExecutor = aheadExecutor;
    }

    /** A producer id no one else got, or {@link #NONE} when the controller gave no block (logged). */
    public synchronized long nextProducerId() {
        if (next >= end) {
            if (aheadEnd > 0) {
                take(aheadFirst, aheadEnd);
                aheadEnd = 0;
            } else {
                long[] block = allocateBlock(true);
                if (block == null) {
                    return NONE;
                }
                take(block[0], block[1]);
            }
        }
        long id = next++;
        if ((end - next) * 10 <= blockSize) {
            fetchAhead();
        }
        return id;
    }

    /**
     * Starts fetching the next block unless one is held ahead or being fetched; returns at once. A
     * failure is logged at DEBUG and leaves the fetch to {@link #nextProducerId} (which logs WARN).
     * Called once the broker has joined its cluster, and by {@link #nextProducerId} at the last tenth
     * of a block. Any thread.
     */
    public void fetchAhead() {
        synchronized (this) {
            if (fetchingAhead || aheadEnd > 0 || brokerEpoch.getAsLong() < 0) {
                return;
            }
            fetchingAhead = true;
        }
        try {
            aheadExecutor.execute(() -> {
                long[] block = null;
                try {
                    block = allocateBlock(false);
                } catch (RuntimeException e) {
                    // E.g. the controller client closed under a broker shutting down.
                    LOG.debug("Broker {} fetching a producer id block ahead failed: {}", brokerId, e.toString());
                } finally {
                    fetched(block);
                }
            });
        } catch (RuntimeException e) {
            fetched(null); // no thread to run it (shutting down): nextProducerId asks itself
            LOG.debug("Broker {} could not start fetching a producer id block: {}", brokerId, e.toString());
        }
    }

    private synchronized void fetched(long[] block) {
        fetchingAhead = false;
        if (block == null) {
            return;
        }
        if (next >= end) {
            take(block[0], block[1]);
        } else {
            aheadFirst = block[0];
            aheadEnd = block[1];
        }
    }

    /** Whether ids are in hand: an unused rest of the current block or a block ahead (for tests). */
    public synchronized boolean holdsIds() {
        return next < end || aheadEnd > 0;
    }

    /** Whether a block is held ahead of the current one (for tests). */
    public synchronized boolean hasBlockAhead() {
        return aheadEnd > 0;
    }

    private void take(long first, long endExclusive) {
        next = first;
        end = endExclusive;
        blockSize = endExclusive - first;
    }

    /** One block from the controller, [first, end), or null (logged: WARN when {@code loud}). */
    private long[] allocateBlock(boolean loud) {
        long epoch = brokerEpoch.getAsLong();
        if (epoch < 0) {
            return null;
        }
        AllocateProducerIdsResponse r;
        try {
            r = allocate.apply(AllocateProducerIdsRequest.newBuilder()
                    .setBrokerId(brokerId)
                    .setBrokerEpoch(epoch)
                    .build());
        } catch (ControllerUnavailableException e) {
            if (loud) {
                LOG.warn("No producer id block for broker {}: {}", brokerId, e.getMessage());
            } else {
                LOG.debug("No producer id block fetched ahead for broker {}: {}", brokerId, e.getMessage());
            }
            return null;
        }
        if (r.getError() != ErrorCode.NONE || r.getBlockSize() <= 0) {
            if (loud) {
                LOG.warn("No producer id block for broker {}: {} {}", brokerId, r.getError(), r.getErrorMessage());
            } else {
                LOG.debug(
                        "No producer id block fetched ahead for broker {}: {} {}",
                        brokerId,
                        r.getError(),
                        r.getErrorMessage());
            }
            return null;
        }
        long first = r.getFirstProducerId();
        long endExclusive = first + r.getBlockSize();
        LOG.info("Broker {} got producer ids [{}, {}){}", brokerId, first, endExclusive, loud ? "" : " ahead");
        return new long[] {first, endExclusive};
    }
}
