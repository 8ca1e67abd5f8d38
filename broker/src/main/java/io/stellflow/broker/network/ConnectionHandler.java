package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.FrameDecoder;
import io.stellflow.protocol.OversizedFrame;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last inbound handler of a client connection. Hands each request payload from the request
 * {@link FrameDecoder} to the request handler pool (through a per-connection {@link SerialExecutor},
 * so one connection's requests run in order), answers discarded oversized frames at once and logs a
 * stream the decoder gave up on ({@link FrameDecoder.UnsyncableFrame}; the decoder closes it). With
 * event-loop dispatch on, a request the handler can take without blocking (a Produce to hosted
 * partitions, handed to their append queues) is handled right here instead, when nothing of this
 * connection is pending in the pool; everything else still goes to the pool.
 *
 * <p>Back pressure ({@link ReadGate}): while more than {@value #PAUSE_READS_ABOVE} requests of this
 * connection wait, reading from the socket is paused; it resumes below {@value #RESUME_READS_BELOW}.
 * Reading is also paused while the connection is unwritable (its queued responses are above the
 * write-buffer high water mark because the client does not read them), and the requests already
 * read wait unhandled until it is writable again: pipelined Fetches read in one go would otherwise
 * all queue their responses (BackPressureTest measured 1.6 MB queued over a 256 KiB mark).
 *
 * <p>Buffer ownership: the payload from the decoder is released here after the handler returns (or
 * immediately when the pool rejects the task at shutdown).
 *
 * <p>Thread-safety: one instance per channel; Netty callbacks run on the channel's event loop.
 */
public final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionHandler.class);

    /** Queued requests that pause reading: 128 pipelined requests is far beyond what SDKs send. */
    static final int PAUSE_READS_ABOVE = 128;

    static final int RESUME_READS_BELOW = 32;

    /** The handler of a client connection, set when it is added ({@link #executeInOrder}). */
    public static final AttributeKey<ConnectionHandler> KEY = AttributeKey.valueOf("stellflow.connection");

    private final RequestDispatcher dispatcher;
    private final SerialExecutor executor;
    private volatile Channel channel;
    private final boolean eventLoopDispatch;
    private ReadGate gate;

    /**
     * @param dispatcher routes requests to the API handlers
     * @param pool the shared request handler pool
     * @param eventLoopDispatch whether a request whose handler can take it without blocking
     *     ({@link EventLoopApiHandler}: Produce to hosted partitions with append agents) is handled on
     *     the event loop when none of this connection's earlier requests is still queued or running
     *     in the pool (so the connection's requests keep their order)
     */
    public ConnectionHandler(RequestDispatcher dispatcher, Executor pool, boolean eventLoopDispatch) {
        this.dispatcher = dispatcher;
        // A request is handled only while its response can be queued: an unwritable connection's
        // read requests wait (with their frames) instead of adding responses past the high water
        // mark; a closed one's run (and release their frames) at once.
        this.executor = new SerialExecutor(pool, this::canRespond);
        this.eventLoopDispatch = eventLoopDispatch;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        gate = new ReadGate(ctx.channel());
        ctx.channel().attr(ReadGate.KEY).set(gate);
        ctx.channel().attr(KEY).set(this);
    }

    /**
     * Runs {@code task} on the request handler pool after this connection's requests already there
     * and before any it reads later (event-loop dispatch waits while a task is pending): the rest of
     * a request the event loop could not finish without waiting keeps the connection's order. Any
     * thread.
     *
     * @throws RejectedExecutionException the pool is shut down (the task did not run)
     */
    public void executeInOrder(Runnable task) {
        executor.execute(task);
    }

    /**
     * Runs {@code task} on the calling thread when none of this connection's requests is queued or
     * running in the pool (so it keeps the connection's order, as {@link #executeInOrder} would), and
     * the connection can take responses; else returns false and runs nothing. For a continuation
     * that cannot block, saving its hop to the pool. Any thread.
     */
    public boolean tryRunInOrderHere(Runnable task) {
        return executor.tryRunHere(task);
    }

    /** This connection's back-pressure switch. */
    public ReadGate gate() {
        return gate;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            gate.resume(ReadGate.UNWRITABLE);
            executor.resume();
        } else {
            gate.pause(ReadGate.UNWRITABLE);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        executor.resume(); // held requests run and release their frames (their responses fail)
        ctx.fireChannelInactive();
    }

    private boolean canRespond() {
        Channel ch = channel;
        return ch == null || ch.isWritable() || !ch.isActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf payload) {
            if (eventLoopDispatch && executor.pending() == 0 && dispatchHere(ctx.channel(), payload)) {
                payload.release();
                return;
            }
            submit(ctx.channel(), payload);
        } else if (msg instanceof OversizedFrame frame) {
            short errorCode = frame.answerErrorCode();
            LOG.warn(
                    "Discarded an oversized {} request of {} bytes from {} (correlationId {})",
                    ApiKeys.name(frame.apiKey()),
                    frame.frameLength(),
                    ctx.channel().remoteAddress(),
                    frame.correlationId());
            ctx.writeAndFlush(RequestContext.headerOnly(ctx.channel(), frame.correlationId(), errorCode));
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof FrameDecoder.UnsyncableFrame frame) {
            LOG.warn(
                    "Closing connection from {}: frameLength {} (negative or below 10 bytes), cannot stay in sync",
                    ctx.channel().remoteAddress(),
                    frame.frameLength());
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    /** Requests of this connection read from the socket and not yet handled (the request queue depth). */
    public int pendingRequests() {
        return executor.pending();
    }

    /** {@link RequestDispatcher#dispatchOnEventLoop}; releases {@code payload} if it throws. */
    private boolean dispatchHere(Channel channel, ByteBuf payload) {
        try {
            return dispatcher.dispatchOnEventLoop(channel, payload, System.nanoTime());
        } catch (RuntimeException | Error e) {
            payload.release();
            throw e;
        }
    }

    private void submit(Channel channel, ByteBuf payload) {
        long receivedNanos = System.nanoTime();
        try {
            executor.execute(() -> {
                try {
                    dispatcher.dispatch(channel, payload, receivedNanos);
                } finally {
                    payload.release();
                    maybeResumeReads(channel);
                }
            });
        } catch (RejectedExecutionException e) {
            payload.release();
            channel.close();
            return;
        }
        if (executor.pending() > PAUSE_READS_ABOVE) {
            gate.pause(ReadGate.PENDING_REQUESTS);
        }
    }

    private void maybeResumeReads(Channel channel) {
        if (executor.pending() < RESUME_READS_BELOW && !channel.config().isAutoRead()) {
            gate.resume(ReadGate.PENDING_REQUESTS);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            LOG.debug("Connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        } else {
            LOG.warn(
                    "Closing connection {} after an unexpected error",
                    ctx.channel().remoteAddress(),
                    cause);
        }
        ctx.close();
    }
}
