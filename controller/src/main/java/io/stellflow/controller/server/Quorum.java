package io.stellflow.controller.server;

import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.MetadataRecord;
import java.io.IOException;
import java.util.List;

/**
 * What the control plane needs of the metadata quorum: whether this node may commit, who leads, the
 * committed image, and committing one command. {@link RaftQuorum} is the implementation; the control
 * plane's unit tests use an in-memory one that applies commands with the same applier.
 *
 * <p>Thread-safety: implementations are callable from any thread.
 */
interface Quorum {
    /** Whether this node is the Raft leader and has committed an entry of its term. */
    boolean isActive();

    /** The leader's node id as this node knows it, or -1. */
    int leaderId();

    /** The latest image this node applied (committed entries only). */
    MetadataImage image();

    /**
     * Commits one command (its records applied atomically) and waits up to {@code timeoutMs} for the
     * outcome: NOT_CONTROLLER when this node is not (or no longer) the ready leader, REQUEST_TIMED_OUT
     * when the entry did not commit in time, else the applier's verdict and the entry's index.
     */
    RaftQuorum.Submitted submit(List<MetadataRecord> records, long timeoutMs);

    /**
     * The quorum as this node sees it (leader, term, indexes, voters).
     *
     * @throws IOException when the Raft server cannot report it
     */
    RaftQuorum.QuorumState describe() throws IOException;
}
