package io.stellflow.controller.server;

import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.ErrorCode;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Broker liveness, in the active controller's memory only: the last heartbeat time per broker. A
 * checker thread fences an unfenced broker whose last heartbeat is older than
 * {@code broker.session.timeout.ms}. When this node becomes active every broker gets a fresh grace
 * period (a new controller has seen no heartbeats yet).
 *
 * <p>Thread-safety: {@link #touch} from any thread; {@link #checkOnce} from the checker thread.
 */
final class BrokerLiveness {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerLiveness.class);

    private final ConcurrentHashMap<Integer, Long> lastSeenNs = new ConcurrentHashMap<>();
    private final long sessionTimeoutNs;
    private final LongSupplier clockNs;
    private final ControllerMetrics metrics;
    private final boolean uncleanDefault;
    private final StorageReports storage;

    BrokerLiveness(long sessionTimeoutMs, LongSupplier clockNs, ControllerMetrics metrics, boolean uncleanDefault) {
        this(sessionTimeoutMs, clockNs, metrics, uncleanDefault, new StorageReports());
    }

    /** @param storage the brokers' failed replicas, never elected when a broker is fenced */
    BrokerLiveness(
            long sessionTimeoutMs,
            LongSupplier clockNs,
            ControllerMetrics metrics,
            boolean uncleanDefault,
            StorageReports storage) {
        this.storage = storage;
        this.sessionTimeoutNs = sessionTimeoutMs * 1_000_000L;
        this.clockNs = clockNs;
        this.metrics = metrics;
        this.uncleanDefault = uncleanDefault;
    }

    void touch(int brokerId) {
        lastSeenNs.put(brokerId, clockNs.getAsLong());
    }

    /** Forgets all heartbeats: every broker's session restarts now (on becoming active). */
    void reset() {
        lastSeenNs.clear();
    }

    /** Fences expired brokers through {@code quorum}; returns how many it fenced. */
    int checkOnce(Quorum quorum, long requestTimeoutMs) {
        if (!quorum.isActive()) {
            return 0;
        }
        MetadataImage img = quorum.image();
        long now = clockNs.getAsLong();
        int fenced = 0;
        for (BrokerRegistration b : img.brokers().values()) {
            if (b.fenced()) {
                continue;
            }
            Long seen = lastSeenNs.putIfAbsent(b.id(), now);
            if (seen == null || now - seen <= sessionTimeoutNs) {
                continue;
            }
            Fencing.Plan plan = Fencing.fence(quorum.image(), b, uncleanDefault, storage);
            RaftQuorum.Submitted s = quorum.submit(plan.records(), requestTimeoutMs);
            if (s.error() == ErrorCode.NONE) {
                fenced++;
                Elections.committed(plan.changes(), metrics);
                // Counted once per expired session, when its fence committed (a failed attempt is
                // retried on the next check and must not count twice).
                metrics.heartbeatTimeout();
                LOG.info(
                        "BROKER_FENCED broker={} epoch={} reason=session_timeout silent_ms={}",
                        b.id(),
                        b.brokerEpoch(),
                        (now - seen) / 1_000_000L);
            } else {
                LOG.warn("fencing broker {} failed: {} {}", b.id(), s.error(), s.message());
            }
        }
        return fenced;
    }
}
