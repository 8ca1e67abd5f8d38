package io.stellflow.broker.topic;

import java.io.IOException;

/**
 * A write refused because its partition had already failed ({@link Partition#failure}): nothing was
 * written. The caller answers it as a failed write, but it is not a new failure: {@link
 * PartitionFailures#writeFailed} ignores it, so a refusal that is handled after the partition
 * recovered ({@link Partition#recoverInPlace}) does not fail it again.
 */
public final class PartitionFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param message names the partition and the failure that stopped it */
    public PartitionFailedException(String message) {
        super(message);
    }
}
