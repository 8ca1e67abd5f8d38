package io.stellflow.controller;

import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;

/**
 * Receives committed metadata from a {@link MetadataFollower}, in offset order, on the follower's
 * single delivery thread (so an implementation needs no locking of its own for these calls; it must
 * not block for long, the stream waits for it).
 */
public interface MetadataListener {
    /**
     * A full image that replaces whatever the listener had: the first event when starting from offset
     * 0 or from an offset the controller no longer retains, and after a snapshot install. The listener
     * reconciles its local state (logs to create or delete, leadership) against it.
     */
    void onImage(MetadataImage image);

    /**
     * One committed entry. {@code image} is the image after applying {@code delta} to the previous
     * one ({@code delta.offset() == image.offset()}); {@code delta.records()} is empty for an entry
     * that the state machine rejected (nothing changed).
     */
    void onDelta(MetadataDelta delta, MetadataImage image);
}
