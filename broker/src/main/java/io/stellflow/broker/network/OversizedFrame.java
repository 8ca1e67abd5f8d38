package io.stellflow.broker.network;

/**
 * Emitted by {@link FrameDecoder} after it has read and discarded a request frame whose
 * {@code frameLength} exceeded the limit. Carries what is needed to answer it header-only (spec §1.3).
 *
 * <p>Thread-safety: immutable.
 *
 * @param apiKey the apiKey at payload offset 0
 * @param correlationId the correlationId at payload offset 6
 * @param frameLength the declared payload length in bytes
 */
public record OversizedFrame(short apiKey, int correlationId, int frameLength) {}
