package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.netty.util.Timer;
import io.stellflow.broker.fetch.DelayedFetch;
import io.stellflow.broker.fetch.FetchPlan;
import io.stellflow.broker.fetch.FetchReader;
import io.stellflow.broker.fetch.FetchResult;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponseLayout;
import java.util.concurrent.Executor;

/**
 * Fetch (apiKey 3, {@code docs/spec/wire-protocol.md} §6.4). Range checks on the request are done
 * by {@link FetchRequest#read} (header-only {@code INVALID_REQUEST}); partitions are resolved by
 * {@link FetchPlan}, read by {@link FetchReader}. When fewer than {@code minBytes} are readable,
 * {@code maxWaitMs > 0} and no partition has an error, the Fetch is parked as a {@link
 * DelayedFetch} (decision 9.e). A follower Fetch ({@code replicaId >= 0}) first records each
 * partition's fetch offset as that follower's LEO on the leader ({@link
 * io.stellflow.broker.topic.Partition#recordFollowerFetch}), which may advance the high watermark;
 * a broker that is no follower replica of a partition gets {@code NOT_LEADER_OR_FOLLOWER} for it.
 *
 * <p>Thread-safety: any request thread; no state but its {@link FetchReader}'s log throttles.
 */
public final class FetchHandler implements ApiHandler {
    private final PartitionRouter registry;
    private final Executor pool;
    private final FetchReader reader;
    private final Timer timer;

    /**
     * @param registry the partitions this broker leads
     * @param pool request handler pool for long-poll re-evaluations
     * @param zeroCopy {@code fetch.zero.copy}: send log bytes as file regions (else copy them)
     * @param timer the timer wheel that expires parked Fetches
     */
    public FetchHandler(PartitionRouter registry, Executor pool, boolean zeroCopy, Timer timer) {
        this.registry = registry;
        this.pool = pool;
        this.reader = new FetchReader(zeroCopy);
        this.timer = timer;
    }

    /**
     * Fetch v0 ({@code docs/spec/wire-protocol.md} §6.4), v1 ({@link FetchResponseLayout}) and v2
     * (v1 with the follower's broker epoch, {@code docs/protocol-additions.md}).
     */
    @Override
    public short maxVersion() {
        return FetchResponseLayout.VERSION_2;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        short version = context.header().apiVersion();
        FetchRequest request = FetchRequest.read(body, version);
        FetchPlan plan = FetchPlan.resolve(request, registry, version);
        if (request.replicaId() >= 0) {
            recordFollowerFetch(plan, request.replicaId(), request.replicaEpoch());
        }
        FetchResult result = reader.read(plan, context);
        boolean answerNow = request.maxWaitMs() == 0
                || request.minBytes() == 0
                || result.hasError()
                || result.recordsBytes() >= request.minBytes();
        if (answerNow) {
            context.sendFetch(result.frame());
            return;
        }
        result.release();
        DelayedFetch.park(context, plan, result, pool, reader, timer);
    }

    /**
     * A follower Fetch ({@code docs/spec/wire-protocol.md} §6.4, {@code replicaId >= 0}): each
     * resolved partition records the fetch offset as the follower's LEO before the read, so the HW
     * in this very response already counts it, with the follower's broker epoch (v2; -1 before).
     */
    private static void recordFollowerFetch(FetchPlan plan, int replicaId, long replicaEpoch) {
        long nowMs = System.currentTimeMillis();
        for (FetchPlan.TopicPlan topic : plan.topics()) {
            for (FetchPlan.PartitionPlan p : topic.partitions()) {
                if (p.partition() != null) {
                    p.partition()
                            .recordFollowerFetch(
                                    replicaId, replicaEpoch, p.request().fetchOffset(), nowMs);
                }
            }
        }
    }
}
