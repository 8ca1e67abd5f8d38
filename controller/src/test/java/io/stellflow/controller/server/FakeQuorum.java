package io.stellflow.controller.server;

import io.stellflow.controller.image.ApplyResult;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * An in-memory {@link Quorum} for the control plane's unit tests: each command is applied at once
 * with {@link MetadataApplier}, at term 1 and the next index, as the state machine applies a committed
 * entry (a rejected entry still takes its index). {@link #failNext} makes the next submit fail the way
 * Raft can (NOT_CONTROLLER, REQUEST_TIMED_OUT) without applying anything.
 *
 * <p>Thread-safety: synchronized; the tests drive it from one thread.
 */
final class FakeQuorum implements Quorum {
    boolean active = true;
    int leaderId;
    private MetadataImage image = MetadataImage.EMPTY;
    private ErrorCode failNext;
    final List<List<MetadataRecord>> submitted = new ArrayList<>();

    /** @param leaderId the leader this node knows of (itself when active) */
    FakeQuorum(int leaderId) {
        this.leaderId = leaderId;
    }

    /** Applies {@code records} as the next entry; it must apply. */
    synchronized FakeQuorum with(List<MetadataRecord> records) {
        ApplyResult r = MetadataApplier.apply(image, 1, image.offset() + 1, records);
        if (!r.ok()) {
            throw new IllegalArgumentException(r.message());
        }
        image = r.image();
        return this;
    }

    synchronized void failNext(ErrorCode error) {
        failNext = error;
    }

    @Override
    public synchronized boolean isActive() {
        return active;
    }

    @Override
    public synchronized int leaderId() {
        return leaderId;
    }

    @Override
    public synchronized MetadataImage image() {
        return image;
    }

    @Override
    public synchronized RaftQuorum.Submitted submit(List<MetadataRecord> records, long timeoutMs) {
        submitted.add(List.copyOf(records));
        if (failNext != null) {
            ErrorCode e = failNext;
            failNext = null;
            return new RaftQuorum.Submitted(e, "injected " + e, -1);
        }
        if (!active) {
            return new RaftQuorum.Submitted(ErrorCode.NOT_CONTROLLER, "not the leader", -1);
        }
        long index = image.offset() + 1;
        ApplyResult r = MetadataApplier.apply(image, 1, index, records);
        image = r.image();
        return new RaftQuorum.Submitted(r.error(), r.message(), index);
    }

    @Override
    public RaftQuorum.QuorumState describe() throws IOException {
        throw new IOException("no Raft server in unit tests");
    }
}
