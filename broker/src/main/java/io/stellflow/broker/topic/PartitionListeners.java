package io.stellflow.broker.topic;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of one {@link Partition}: append listeners (parked follower Fetches), told after
 * every append, and high-watermark listeners (parked consumer Fetches, acks=-1 Produces), told when
 * the HW advanced or the replica state changed. A listener that throws is logged and the others are
 * still told.
 *
 * <p>Thread-safety: any thread (concurrent sets); listeners run on the thread that moved the
 * partition.
 */
final class PartitionListeners {
    /** Partition's logger: the moved event keeps its category. */
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

    private final String topic;
    private final int partition;
    private final Set<AppendListener> listeners = ConcurrentHashMap.newKeySet();
    private final Set<AppendListener> highWatermarkListeners = ConcurrentHashMap.newKeySet();

    PartitionListeners(String topic, int partition) {
        this.topic = topic;
        this.partition = partition;
    }

    void addListener(AppendListener listener) {
        listeners.add(listener);
    }

    void removeListener(AppendListener listener) {
        listeners.remove(listener);
    }

    void addHighWatermarkListener(AppendListener listener) {
        highWatermarkListeners.add(listener);
    }

    void removeHighWatermarkListener(AppendListener listener) {
        highWatermarkListeners.remove(listener);
    }

    int count() {
        return listeners.size() + highWatermarkListeners.size();
    }

    /** Tells the append listeners (none registered: one emptiness check). */
    void notifyAppendListeners() {
        if (!listeners.isEmpty()) {
            notify(listeners);
        }
    }

    /** Tells the high-watermark listeners (none registered: one emptiness check). */
    void notifyHighWatermarkListeners() {
        if (!highWatermarkListeners.isEmpty()) {
            notify(highWatermarkListeners);
        }
    }

    private void notify(Set<AppendListener> set) {
        for (AppendListener listener : set) {
            try {
                listener.onAppend();
            } catch (RuntimeException e) {
                LOG.error("Listener failed on {}-{}", topic, partition, e);
            }
        }
    }
}
