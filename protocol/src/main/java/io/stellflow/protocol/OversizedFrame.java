package io.stellflow.protocol;

/**
 * Emitted by a request {@link FrameDecoder} after it has read and discarded a frame whose {@code
 * frameLength} exceeded the limit. Carries what is needed to answer it header-only ({@code
 * docs/spec/wire-protocol.md} §1.3).
 *
 * <p>Thread-safety: immutable.
 *
 * @param apiKey the apiKey at payload offset 0
 * @param correlationId the correlationId at payload offset 6
 * @param frameLength the declared payload length in bytes
 */
public record OversizedFrame(short apiKey, int correlationId, int frameLength) {
    /**
     * The header-only answer's errorCode ({@code docs/spec/wire-protocol.md} §1.3): {@code
     * RECORD_LIST_TOO_LARGE} (13) for Produce, {@code INVALID_REQUEST} (3) for any other API.
     */
    public short answerErrorCode() {
        return apiKey == ApiKeys.PRODUCE ? Errors.RECORD_LIST_TOO_LARGE : Errors.INVALID_REQUEST;
    }
}
