package io.stellflow.controller.server;

import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.AllocateProducerIdsRequest;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.ProducerIdsRecord;
import java.util.List;

/**
 * AllocateProducerIds: gives a registered broker the next block of {@link #BLOCK_SIZE} producer ids,
 * committed as a {@code ProducerIdsRecord} whose first id the state machine checks against the
 * image's next producer id. The check makes ids unique even when two allocations race or a new
 * active controller's image lags: the loser is rejected at apply time (INVALID_UPDATE_VERSION) and
 * retried here from the newer image.
 *
 * <p>Reached only while active ({@link NotControllerGuard}). Thread-safety: allocations are
 * serialized on this object (one commit at a time; a broker asks once per 1000 producers).
 */
final class ProducerIdRpcs {
    /** Ids per block: a broker asks the controller once per this many InitProducerId calls. */
    static final long BLOCK_SIZE = 1000;

    /** Commits tried before giving up on a race that keeps losing (never seen with one controller). */
    private static final int MAX_ATTEMPTS = 3;

    private final Quorum quorum;
    private final Commands commands;

    ProducerIdRpcs(Quorum quorum, Commands commands) {
        this.quorum = quorum;
        this.commands = commands;
    }

    /** The block given to the broker, or why none was. */
    synchronized AllocateProducerIdsResponse allocate(AllocateProducerIdsRequest req) {
        AllocateProducerIdsResponse.Builder r = AllocateProducerIdsResponse.newBuilder();
        long startNs = commands.startNs();
        ErrorCode error = ErrorCode.NONE;
        String message = "";
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            MetadataImage img = quorum.image();
            BrokerRegistration b = img.broker(req.getBrokerId());
            if (b == null || b.brokerEpoch() != req.getBrokerEpoch()) {
                error = ErrorCode.STALE_BROKER_EPOCH;
                message = "broker " + req.getBrokerId() + " epoch " + req.getBrokerEpoch() + " is not current";
                break;
            }
            long first = img.nextProducerId();
            RaftQuorum.Submitted s = commands.commit(List.of(MetadataRecords.of(ProducerIdsRecord.newBuilder()
                    .setBrokerId(req.getBrokerId())
                    .setBrokerEpoch(req.getBrokerEpoch())
                    .setFirstProducerId(first)
                    .setBlockSize(BLOCK_SIZE)
                    .build())));
            error = s.error();
            message = s.message();
            if (error == ErrorCode.NONE) {
                r.setFirstProducerId(first).setBlockSize(BLOCK_SIZE);
                break;
            }
            if (error != ErrorCode.INVALID_UPDATE_VERSION) {
                break;
            }
        }
        commands.answered(Commands.result(error), startNs);
        return r.setError(error).setErrorMessage(message).build();
    }
}
