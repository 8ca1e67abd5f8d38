package io.stellflow.controller.server;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.FollowMetadataRequest;
import io.stellflow.controller.proto.MetadataEvent;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The FollowMetadata RPC: the committed metadata a broker follows, from its offset on, as deltas (or
 * one full image when it asks from 0 or its offset rolled out of the retained deltas), until the call
 * is cancelled or this node stops being the active controller (then one {@code not_controller} event
 * naming the leader). Each delta or image sent counts once ({@link ControllerMetrics#deltaBroadcast}).
 *
 * <p>Flow control: events are sent only while the call is ready (gRPC's outbound buffer is below its
 * threshold and the follower's HTTP/2 window is open). A slow follower therefore holds back the stream
 * instead of piling up events in this controller's memory; what it has not read yet stays in the
 * state machine's retained deltas (or becomes one full image once they roll past).
 *
 * <p>Threads: one virtual thread per stream ({@code metadata-stream}), woken by gRPC's ready and
 * cancel callbacks; it re-checks leadership every {@value #STREAM_RECHECK_MS} ms.
 */
final class MetadataStream {
    /** Most deltas taken from the state machine at once for one stream. */
    private static final int STREAM_BATCH_DELTAS = 256;

    /** How often a stream waiting for its follower (or for new entries) re-checks leadership, ms. */
    static final long STREAM_RECHECK_MS = 500;

    private final MetadataStateMachine stateMachine;
    private final NotControllerGuard guard;
    private final ControllerMetrics metrics;

    MetadataStream(MetadataStateMachine stateMachine, NotControllerGuard guard, ControllerMetrics metrics) {
        this.stateMachine = stateMachine;
        this.guard = guard;
        this.metrics = metrics;
    }

    /** Starts the stream's thread (the guard checked that this node is active). */
    void follow(FollowMetadataRequest req, StreamObserver<MetadataEvent> out) {
        ServerCallStreamObserver<MetadataEvent> obs = (ServerCallStreamObserver<MetadataEvent>) out;
        StreamGate gate = new StreamGate();
        obs.setOnReadyHandler(gate::signal);
        obs.setOnCancelHandler(gate::signal);
        Thread.ofVirtual().name("metadata-stream").start(() -> stream(req.getFromOffset(), obs, gate));
    }

    /** Wakes the stream's thread when gRPC reports the call ready again or cancelled. */
    private static final class StreamGate {
        synchronized void signal() {
            notifyAll();
        }

        /** Waits until the call is ready; false when cancelled or still not ready after {@code maxWaitMs}. */
        synchronized boolean awaitReady(ServerCallStreamObserver<?> obs, long maxWaitMs) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxWaitMs);
            while (!obs.isReady() && !obs.isCancelled()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return !obs.isCancelled();
        }
    }

    private void stream(long fromOffset, ServerCallStreamObserver<MetadataEvent> obs, StreamGate gate) {
        long next = fromOffset;
        try {
            if (next <= 0) {
                next = sendImage(obs);
            }
            while (!obs.isCancelled()) {
                if (!guard.isActive()) {
                    obs.onNext(MetadataEvent.newBuilder()
                            .setNotController(guard.leader())
                            .build());
                    obs.onCompleted();
                    return;
                }
                if (!gate.awaitReady(obs, STREAM_RECHECK_MS)) {
                    continue;
                }
                List<MetadataDelta> deltas =
                        stateMachine.awaitDeltasAfter(next, STREAM_RECHECK_MS, STREAM_BATCH_DELTAS);
                if (deltas == null) {
                    next = sendImage(obs);
                    continue;
                }
                for (MetadataDelta d : deltas) {
                    if (!obs.isReady()) {
                        break; // the rest after `next` is taken again once the follower has read
                    }
                    obs.onNext(MetadataEvent.newBuilder().setDelta(d.toProto()).build());
                    metrics.deltaBroadcast();
                    next = d.offset();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            obs.onCompleted();
        } catch (RuntimeException e) {
            // Cancelled by the client, or the server is shutting down: the stream is over either way.
            if (!obs.isCancelled()) {
                try {
                    obs.onError(io.grpc.Status.UNAVAILABLE
                            .withDescription(e.toString())
                            .asRuntimeException());
                } catch (RuntimeException ignoredAlreadyClosed) {
                    // the call was closed concurrently
                }
            }
        }
    }

    private long sendImage(ServerCallStreamObserver<MetadataEvent> obs) {
        MetadataImage img = stateMachine.image();
        obs.onNext(MetadataEvent.newBuilder().setImage(img.toSnapshot()).build());
        metrics.deltaBroadcast();
        return img.offset();
    }
}
