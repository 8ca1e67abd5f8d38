package io.stellflow.broker.cluster;

import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.ErrorCode;
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
 * <p>Thread-safety: synchronized; a call that needs a new block waits for the controller (once per
 * 1000 producers), the others wait for it.
 */
public final class ProducerIdBlocks {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerIdBlocks.class);

    /** {@link #nextProducerId}: no block could be had from the controller now; ask again later. */
    public static final long NONE = -1L;

    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final Function<AllocateProducerIdsRequest, AllocateProducerIdsResponse> allocate;

    /** Guarded by this: the next id of the current block, and the end of the block (exclusive). */
    private long next;

    private long end;

    /**
     * @param brokerEpoch this broker's current epoch (-1 before it registered)
     * @param allocate the control-plane call ({@code ControllerClient::allocateProducerIds})
     */
    public ProducerIdBlocks(
            int brokerId,
            LongSupplier brokerEpoch,
            Function<AllocateProducerIdsRequest, AllocateProducerIdsResponse> allocate) {
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.allocate = allocate;
    }

    /** A producer id no one else got, or {@link #NONE} when the controller gave no block (logged). */
    public synchronized long nextProducerId() {
        if (next >= end) {
            long epoch = brokerEpoch.getAsLong();
            if (epoch < 0) {
                return NONE;
            }
            AllocateProducerIdsResponse r;
            try {
                r = allocate.apply(AllocateProducerIdsRequest.newBuilder()
                        .setBrokerId(brokerId)
                        .setBrokerEpoch(epoch)
                        .build());
            } catch (ControllerUnavailableException e) {
                LOG.warn("No producer id block for broker {}: {}", brokerId, e.getMessage());
                return NONE;
            }
            if (r.getError() != ErrorCode.NONE || r.getBlockSize() <= 0) {
                LOG.warn("No producer id block for broker {}: {} {}", brokerId, r.getError(), r.getErrorMessage());
                return NONE;
            }
            next = r.getFirstProducerId();
            end = next + r.getBlockSize();
            LOG.info("Broker {} got producer ids [{}, {})", brokerId, next, end);
        }
        return next++;
    }
}
