package io.stellflow.controller.image;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One registered broker in the metadata image.
 *
 * @param id broker id ({@code broker.id}/{@code node.id})
 * @param incarnationId random id the broker process chose at start; a new one means a restart
 * @param brokerEpoch the Raft index of the entry that registered this incarnation
 * @param listeners the broker's advertised listeners, in registration order
 * @param rack rack id, empty when none
 * @param fenced whether the broker is fenced (not eligible as leader or ISR member)
 */
public record BrokerRegistration(
        int id, UUID incarnationId, long brokerEpoch, List<BrokerEndpoint> listeners, String rack, boolean fenced) {
    public BrokerRegistration {
        Objects.requireNonNull(incarnationId, "incarnationId");
        listeners = List.copyOf(listeners);
        Objects.requireNonNull(rack, "rack");
    }

    BrokerRegistration withFenced(boolean newFenced) {
        return new BrokerRegistration(id, incarnationId, brokerEpoch, listeners, rack, newFenced);
    }
}
