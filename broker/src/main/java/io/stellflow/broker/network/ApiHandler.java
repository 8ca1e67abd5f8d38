package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;

/**
 * Handles the body of one API (apiVersion 0 up to {@link #maxVersion()}). Runs on a request handler thread, never on an event
 * loop, so it may do file I/O.
 *
 * <p>Contract: answer exactly once through {@code context}, now or later (a parked Fetch answers
 * later). The {@code body} buffer is valid only during the call and is released by the caller; a
 * handler that answers later must not keep references into it. A malformed body is reported by
 * throwing {@link io.stellflow.protocol.ProtocolException}; the dispatcher answers its code
 * header-only. Any other exception is a bug and is answered with {@code UNKNOWN_SERVER_ERROR}.
 */
@FunctionalInterface
public interface ApiHandler {
    /** Handles one request whose header was already read; {@code body} is positioned at the body start. */
    void handle(RequestContext context, ByteBuf body);

    /** The highest apiVersion this handler reads (the lowest is 0); advertised in ApiVersions. */
    default short maxVersion() {
        return 0;
    }
}
