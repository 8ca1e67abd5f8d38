package io.stellflow.controller;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.stellflow.controller.image.ApplyResult;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.proto.FollowMetadataRequest;
import io.stellflow.controller.proto.MetadataEvent;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the committed metadata of the active controller and hands it to a {@link MetadataListener}
 * in offset order on one thread ({@code metadata-follower}). It applies every delta to its own
 * {@link MetadataImage} with the controllers' {@link MetadataApplier}, so the images it passes on are
 * equal to the controllers' at the same offset. On a broken stream or a leader change it reconnects
 * (backoff 50 ms doubling to 1 s) and resumes after the last delivered offset.
 *
 * <p>Thread-safety: {@link #image()}, {@link #offset()}, {@link #awaitOffset} and {@link #close} may be
 * called from any thread.
 */
public final class MetadataFollower implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataFollower.class);

    private final ControllerClient client;
    private final MetadataListener listener;
    private final Thread thread;
    private volatile MetadataImage image = MetadataImage.EMPTY;
    private volatile long offset;
    private volatile boolean closed;
    private volatile ClientCall<?, ?> currentCall;

    MetadataFollower(ControllerClient client, long fromOffset, MetadataListener listener) {
        this.client = client;
        this.listener = listener;
        this.offset = fromOffset;
        this.thread = Thread.ofPlatform().name("metadata-follower").daemon().unstarted(this::run);
        thread.start();
    }

    /** The latest delivered image ({@link MetadataImage#EMPTY} before the first). */
    public MetadataImage image() {
        return image;
    }

    /** The metadata offset of the latest delivered image or delta. */
    public long offset() {
        return offset;
    }

    /**
     * Waits until an image or delta at or past {@code target} has been delivered.
     *
     * @return whether it was reached before {@code timeout}
     */
    public boolean awaitOffset(long target, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            while (offset < target) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
        return true;
    }

    private void run() {
        long backoffMs = 50;
        while (!closed && !client.isClosed()) {
            String target = client.pickTarget();
            try {
                ManagedChannel ch = client.channel(target);
                ClientCall<FollowMetadataRequest, MetadataEvent> call =
                        ch.newCall(ControllerRpc.FOLLOW_METADATA, CallOptions.DEFAULT);
                currentCall = call;
                Iterator<MetadataEvent> it = ClientCalls.blockingServerStreamingCall(
                        call,
                        FollowMetadataRequest.newBuilder().setFromOffset(offset).build());
                while (!closed && it.hasNext()) {
                    MetadataEvent ev = it.next();
                    switch (ev.getEventCase()) {
                        case IMAGE -> {
                            MetadataImage img = MetadataImage.fromSnapshot(ev.getImage());
                            listener.onImage(img);
                            publish(img);
                            client.setLeaderHint(target);
                            backoffMs = 50;
                        }
                        case DELTA -> {
                            MetadataDelta d = MetadataDelta.fromProto(ev.getDelta());
                            if (d.offset() <= offset) {
                                continue;
                            }
                            ApplyResult r = MetadataApplier.apply(image, d);
                            listener.onDelta(d, r.image());
                            publish(r.image());
                            client.setLeaderHint(target);
                            backoffMs = 50;
                        }
                        case NOT_CONTROLLER -> {
                            var l = ev.getNotController();
                            client.setLeaderHint(l.hasEndpoint() ? ControllerClient.hostPort(l) : null);
                        }
                        case EVENT_NOT_SET -> {}
                    }
                }
                if (!closed) {
                    ControllerClient.sleepMs(backoffMs);
                    backoffMs = Math.min(1000, backoffMs * 2);
                }
            } catch (StatusRuntimeException | IllegalStateException e) {
                if (closed || client.isClosed()) {
                    return;
                }
                LOG.debug("metadata stream from {} broke: {}", target, e.toString());
                client.setLeaderHint(null);
                try {
                    ControllerClient.sleepMs(backoffMs);
                } catch (ControllerUnavailableException interrupted) {
                    return;
                }
                backoffMs = Math.min(1000, backoffMs * 2);
            } catch (ControllerUnavailableException interrupted) {
                return;
            } catch (RuntimeException e) {
                LOG.error("metadata listener or image failed; follower stops", e);
                return;
            }
        }
    }

    private void publish(MetadataImage img) {
        synchronized (this) {
            image = img;
            offset = img.offset();
            notifyAll();
        }
    }

    /** Stops following; waits for the delivery thread (up to 5 s). Idempotent. */
    @Override
    public void close() {
        closed = true;
        ClientCall<?, ?> c = currentCall;
        if (c != null) {
            c.cancel("follower closed", null);
        }
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
