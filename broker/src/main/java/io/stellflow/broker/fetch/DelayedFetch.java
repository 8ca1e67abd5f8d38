package io.stellflow.broker.fetch;

import io.netty.channel.ChannelFuture;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.concurrent.GenericFutureListener;
import io.stellflow.broker.network.QuietTimer;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.AppendListener;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchRequest;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Fetch parked in long-poll (decision 9.e of {@code docs/spec/wire-protocol.md}). It holds no
 * thread while it waits: it is registered as a listener on each of its partitions and has a timeout
 * in the broker's timer ({@link QuietTimer}, 10 ms precision). A consumer Fetch reads below
 * the high watermark, so it listens for HW advances ({@link Partition#addHighWatermarkListener}); a
 * follower Fetch reads up to the log end offset and listens for appends ({@link
 * Partition#addListener}). Each wake-up schedules one re-evaluation on the request handler pool;
 * the Fetch is answered when the readable bytes reach {@code minBytes} (or a partition error
 * appears), or with whatever is readable when {@code maxWaitMs} passes. If the connection closes
 * first, it is dropped silently.
 *
 * <p>Other requests on the same connection are not held back: the parked Fetch does not occupy the
 * connection's serial executor.
 *
 * <p>Thread-safety: every method may run on any thread; {@code done} makes completion happen exactly
 * once (one response, one unregistration).
 */
public final class DelayedFetch implements AppendListener {
    private static final Logger LOG = LoggerFactory.getLogger(DelayedFetch.class);

    private final RequestContext context;
    private final FetchPlan plan;
    private final Executor pool;
    private final FetchReader reader;
    private final Timer timer;
    private final List<Partition> partitions;
    /** A follower Fetch reads up to the LEO and wakes on appends; a consumer's waits for the HW. */
    private final boolean follower;

    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicBoolean checkQueued = new AtomicBoolean();
    private final GenericFutureListener<ChannelFuture> onClose = future -> cancel();
    private volatile Timeout timeout;

    private DelayedFetch(RequestContext context, FetchPlan plan, Executor pool, FetchReader reader, Timer timer) {
        this.timer = timer;
        this.context = context;
        this.plan = plan;
        this.pool = pool;
        this.reader = reader;
        this.partitions = plan.partitions();
        this.follower = plan.request().replicaId() >= 0;
    }

    /**
     * Parks a Fetch whose first evaluation returned fewer than minBytes.
     *
     * @param first the first evaluation (its frame already released by the caller); its bounds detect
     *     appends that happened before the listeners were registered
     * @param pool the request handler pool that runs re-evaluations
     * @param reader the broker's reader (zero-copy or not)
     * @param timer the timer wheel for the maxWaitMs timeout
     */
    public static DelayedFetch park(
            RequestContext context, FetchPlan plan, FetchResult first, Executor pool, FetchReader reader, Timer timer) {
        DelayedFetch fetch = new DelayedFetch(context, plan, pool, reader, timer);
        fetch.start(first.readableBounds());
        return fetch;
    }

    private void start(long[] boundsSeen) {
        context.markParked();
        for (Partition partition : partitions) {
            if (follower) {
                partition.addListener(this);
            } else {
                partition.addHighWatermarkListener(this);
            }
        }
        context.channel().closeFuture().addListener(onClose);
        try {
            timeout = timer.newTimeout(t -> submit(this::expire), plan.request().maxWaitMs(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException | IllegalStateException e) {
            submit(this::expire);
            return;
        }
        for (int i = 0; i < partitions.size() && i < boundsSeen.length; i++) {
            Partition p = partitions.get(i);
            long bound = follower
                    ? p.logEndOffset()
                    : plan.request().isolationLevel() == FetchRequest.READ_COMMITTED
                            ? p.lastStableOffset()
                            : p.highWatermark();
            if (bound != boundsSeen[i]) {
                onAppend();
                break;
            }
        }
    }

    /** Whether the Fetch was answered or dropped. */
    public boolean isDone() {
        return done.get();
    }

    @Override
    public void onAppend() {
        if (!done.get() && checkQueued.compareAndSet(false, true)) {
            submit(this::check);
        }
    }

    private void check() {
        checkQueued.set(false);
        if (done.get()) {
            return;
        }
        FetchResult result;
        try {
            result = reader.read(plan, context);
        } catch (RuntimeException e) {
            if (finish()) {
                failed(e);
            }
            return;
        }
        if ((result.recordsBytes() >= plan.request().minBytes() || result.hasError()) && finish()) {
            context.markLongPollHit();
            context.sendFetch(result.frame());
        } else {
            result.release();
        }
    }

    private void expire() {
        if (!finish()) {
            return;
        }
        FetchResult result;
        try {
            result = reader.read(plan, context);
        } catch (RuntimeException e) {
            failed(e);
            return;
        }
        context.sendFetch(result.frame());
    }

    /**
     * A read of the parked Fetch failed (a bug), after {@link #finish} made this caller the one to
     * answer: the Fetch is answered {@code UNKNOWN_SERVER_ERROR} as the dispatcher answers a failing
     * handler, instead of the exception ending the pool thread and leaving the request unanswered
     * until the client's timeout.
     */
    private void failed(RuntimeException e) {
        LOG.error(
                "Unexpected failure reading a parked Fetch of {}",
                context.channel().remoteAddress(),
                e);
        context.respondError(Errors.UNKNOWN_SERVER_ERROR);
    }

    private void cancel() {
        if (finish()) {
            LOG.debug(
                    "Dropped a parked Fetch: connection {} closed",
                    context.channel().remoteAddress());
        }
    }

    /** Marks the Fetch done and unregisters it; true for the one caller that gets to answer. */
    private boolean finish() {
        if (!done.compareAndSet(false, true)) {
            return false;
        }
        for (Partition partition : partitions) {
            if (follower) {
                partition.removeListener(this);
            } else {
                partition.removeHighWatermarkListener(this);
            }
        }
        Timeout t = timeout;
        if (t != null) {
            t.cancel();
        }
        context.channel().closeFuture().removeListener(onClose);
        return true;
    }

    private void submit(Runnable task) {
        try {
            pool.execute(task);
        } catch (RejectedExecutionException e) {
            // Shutting down: the connection is about to close, nobody waits for the answer.
            finish();
        }
    }
}
