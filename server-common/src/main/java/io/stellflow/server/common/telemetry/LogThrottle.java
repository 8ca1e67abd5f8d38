package io.stellflow.server.common.telemetry;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * At most one loud line per interval for a log line that a client (or one damaged file) can cause
 * on every request: the caller logs the event that {@link #tryAcquire takes} the interval at WARN or
 * ERROR and the others at DEBUG, so a retrying client cannot flood the log. One instance per kind of
 * line and per broker (Produce refusals, Fetch v0 refusals, Fetch read failures).
 *
 * <p>Thread-safety: any thread; lock-free (a volatile read per call, a CAS for the call that takes
 * the interval).
 */
public final class LogThrottle {
    private final LongSupplier nanoClock;
    private final long intervalNs;
    private final AtomicLong nextNs;
    private final LongAdder suppressed = new LongAdder();

    /**
     * The first call takes the line at once.
     *
     * @param nanoClock monotonic time in ns ({@code System::nanoTime}; tests drive their own)
     * @param intervalSeconds the least time between two taken lines, > 0
     */
    public LogThrottle(LongSupplier nanoClock, long intervalSeconds) {
        if (intervalSeconds <= 0) {
            throw new IllegalArgumentException("intervalSeconds " + intervalSeconds + " <= 0");
        }
        this.nanoClock = nanoClock;
        this.intervalNs = TimeUnit.SECONDS.toNanos(intervalSeconds);
        this.nextNs = new AtomicLong(nanoClock.getAsLong());
    }

    /**
     * Whether this event takes the loud line of the current interval (and starts the next one); an
     * event that does not is counted for {@link #takeSuppressed}.
     */
    public boolean tryAcquire() {
        long now = nanoClock.getAsLong();
        long next = nextNs.get();
        if (now - next >= 0 && nextNs.compareAndSet(next, now + intervalNs)) {
            return true;
        }
        suppressed.increment();
        return false;
    }

    /**
     * Events that did not take a line since the last call (for "N more at DEBUG" in the next loud
     * line), and starts counting again. Approximate under races: an event counted while the winner
     * reads is reported with the next line instead.
     */
    public long takeSuppressed() {
        return suppressed.sumThenReset();
    }

    /**
     * For the loud line just taken: {@code "N more since the last <level> at DEBUG; "} with the
     * events {@link #takeSuppressed} counts, or {@code ""} when there were none.
     *
     * @param level the loud line's level as the text should name it ({@code WARN}, {@code ERROR})
     */
    public String takeSuppressedNote(String level) {
        long more = takeSuppressed();
        return more == 0 ? "" : more + " more since the last " + level + " at DEBUG; ";
    }

    /** The least seconds between two taken lines (for the "further ... within N s at DEBUG" text). */
    public long intervalSeconds() {
        return TimeUnit.NANOSECONDS.toSeconds(intervalNs);
    }
}
