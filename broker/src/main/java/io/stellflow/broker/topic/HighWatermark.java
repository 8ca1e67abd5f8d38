package io.stellflow.broker.topic;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The high watermark (HW) value of one {@link Partition}: a leader raises it only by
 * compare-and-set ({@link #advanceTo}), so it never decreases; a follower's replica fetcher and the
 * in-place recovery set it ({@link #set}). What the HW may advance to, and who is told, is the
 * partition's.
 *
 * <p>Thread-safety: any thread; one volatile long, no lock, no allocation.
 */
final class HighWatermark {
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(HighWatermark.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile long value;

    HighWatermark(long initial) {
        this.value = initial;
    }

    long get() {
        return value;
    }

    /** Sets the HW (follower and recovery paths: it may go down). */
    void set(long newValue) {
        value = newValue;
    }

    /**
     * Raises the HW to {@code candidate} if that is higher, by compare-and-set.
     *
     * @return true when this call raised it, false when it was already at or above {@code candidate}
     */
    boolean advanceTo(long candidate) {
        long current;
        do {
            current = value;
            if (candidate <= current) {
                return false;
            }
        } while (!VALUE.compareAndSet(this, current, candidate));
        return true;
    }
}
