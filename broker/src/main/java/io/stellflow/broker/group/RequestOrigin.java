package io.stellflow.broker.group;

import java.util.Objects;

/**
 * Who sent a group or offset request, as the offset journal records it.
 *
 * @param principal the authenticated principal, "ANONYMOUS" until security lands (room for a
 *     tenant later)
 * @param clientId the request header's client id ("" when absent)
 * @param clientHost the peer's address as text
 */
public record RequestOrigin(String principal, String clientId, String clientHost) {
    /** The principal of every request until authentication exists. */
    public static final String ANONYMOUS = "ANONYMOUS";

    public RequestOrigin {
        Objects.requireNonNull(principal, "principal");
        clientId = clientId == null ? "" : clientId;
        clientHost = clientHost == null ? "" : clientHost;
    }

    /** An anonymous origin with the given client id and host. */
    public static RequestOrigin anonymous(String clientId, String clientHost) {
        return new RequestOrigin(ANONYMOUS, clientId, clientHost);
    }
}
