package io.stellflow.broker.network;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.concurrent.RejectedExecutionException;

/**
 * Back-pressure switch of one connection: reading from the socket is paused while ANY reason holds
 * and resumes when none does (each reason is one bit, so one reason clearing cannot resume reads
 * another still needs paused).
 *
 * <p>Reasons: {@link #PENDING_REQUESTS} (too many requests queued for the handler pool), {@link
 * #UNWRITABLE} (responses above the write-buffer high water mark: the client is not reading), {@link
 * #APPEND_BACKLOG} (a partition's append queue is full or the broker's queued request bytes are
 * above {@code queued.max.request.bytes}).
 *
 * <p>Thread-safety: {@link #pause} and {@link #resume} may be called from any thread; the state
 * change and {@code setAutoRead} run on the channel's event loop. After the event loop has shut down
 * they are no-ops (the connection is closed).
 */
public final class ReadGate {
    /** Too many of this connection's requests wait for the handler pool. */
    public static final int PENDING_REQUESTS = 1;

    /** The connection's outbound buffer is above the high water mark. */
    public static final int UNWRITABLE = 1 << 1;

    /** An append queue this connection feeds is full, or queued request bytes are over the limit. */
    public static final int APPEND_BACKLOG = 1 << 2;

    /** The gate of a client connection, set by {@link ConnectionHandler}. */
    public static final AttributeKey<ReadGate> KEY = AttributeKey.valueOf("stellflow.readGate");

    private final Channel channel;

    /** Confined to the event loop. */
    private int reasons;

    /** @param channel the connection */
    public ReadGate(Channel channel) {
        this.channel = channel;
    }

    /** Adds {@code reason}; reading stops (if it was running). */
    public void pause(int reason) {
        onLoop(() -> {
            reasons |= reason;
            apply();
        });
    }

    /** Clears {@code reason}; reading resumes when no other reason holds. */
    public void resume(int reason) {
        onLoop(() -> {
            reasons &= ~reason;
            apply();
        });
    }

    /** The reasons holding reads paused now, OR-ed bits; 0 when reading (event loop only; tests). */
    public int reasons() {
        return reasons;
    }

    /** Whether reads are paused now (event loop only; tests). */
    public boolean isPaused() {
        return !channel.config().isAutoRead();
    }

    private void apply() {
        boolean read = reasons == 0;
        if (channel.config().isAutoRead() != read) {
            channel.config().setAutoRead(read);
        }
    }

    private void onLoop(Runnable r) {
        if (channel.eventLoop().inEventLoop()) {
            r.run();
            return;
        }
        try {
            channel.eventLoop().execute(r);
        } catch (RejectedExecutionException e) {
            // Event loop shut down: the broker is stopping and the connection is closed.
        }
    }
}
