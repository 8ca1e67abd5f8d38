package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;

/**
 * An {@link ApiHandler} that can also take a request on the connection's event loop, skipping the
 * hop to the request handler pool, when doing so cannot block (issue #4: "the event loop decodes the
 * header, slices the body without copying, and hands each partition's batch to that partition's
 * queue"). The dispatcher first asks {@link #decodeIfNonBlocking}; null means "not here" and the
 * request goes to the pool as usual, read again from the body's start.
 *
 * <p>Contract as {@link ApiHandler}: {@link #handleDecoded} answers exactly once through the
 * context, the body (which the decoded request may point into) is released by the caller after it
 * returns, so anything kept later must be retained.
 *
 * @param <T> the decoded request
 */
public interface EventLoopApiHandler<T> extends ApiHandler {
    /**
     * Decodes the body and returns it when the request can be handled on the calling event loop
     * without blocking (no file I/O, no waiting on a lock, a queue or the controller), else null.
     * Must not block and must not answer.
     *
     * @throws io.stellflow.protocol.ProtocolException a malformed body (the dispatcher sends the
     *     request to the pool, which answers the error)
     */
    T decodeIfNonBlocking(ByteBuf body);

    /**
     * As {@link #decodeIfNonBlocking(ByteBuf)} for a request of {@code apiVersion}; the default
     * ignores the version (for handlers whose versions share one layout).
     */
    default T decodeIfNonBlocking(ByteBuf body, short apiVersion) {
        return decodeIfNonBlocking(body);
    }

    /** Handles a request {@link #decodeIfNonBlocking} returned, on the event loop. */
    void handleDecoded(RequestContext context, T request);
}
