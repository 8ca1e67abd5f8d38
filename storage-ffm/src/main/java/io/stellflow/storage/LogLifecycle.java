package io.stellflow.storage;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Whether one {@link UnifiedLog} takes writes, and how it stops and starts again: the closed and
 * failed states (with the failure that caused the refusals), the released state of a failed {@link
 * #reopen}, the one-per-episode disk-full report ({@link LogMetrics#diskFull}), and the three
 * transitions that change them as a whole: {@link #reopen} (reload in place), {@link #crash} (tests)
 * and {@link #close}. The contracts are those of the {@link UnifiedLog} methods {@code reopen},
 * {@code crashForTesting} and {@code close}.
 *
 * <p>Owns only those flags; the segments, epochs, flusher, truncation and producer state it reloads
 * or closes belong to the log.
 *
 * <p>Thread-safety: guarded by the owning log's write lock (the transitions take it; the other
 * methods are called with it held); {@link #isClosed} from any thread.
 */
final class LogLifecycle {
    private final UnifiedLog log;
    private final Path dir;
    private final LogEnvironment env;
    private final ReentrantLock writeLock;
    private final LogSegments segments;
    private final LeaderEpochCache epochCache;
    private final LogFlusher flusher;
    private final LogTruncation truncation;
    private final LogProducerState producers;

    private volatile boolean closed;

    /** Guarded by writeLock. */
    private boolean failed;

    /** Guarded by writeLock: what made the log fail (the cause of the refusals that follow), or null. */
    private Throwable failedBy;

    /**
     * Guarded by writeLock: a {@link #reopen} released the segments' files and then failed to load
     * them again; the segment list holds released segments until a reopen succeeds.
     */
    private boolean released;

    /**
     * Guarded by writeLock: {@link LogMetrics#diskFull} was called since the log was opened or last
     * appended successfully (one report per full episode).
     */
    private boolean diskFullReported;

    LogLifecycle(
            UnifiedLog log,
            ReentrantLock writeLock,
            LogSegments segments,
            LeaderEpochCache epochCache,
            LogFlusher flusher,
            LogTruncation truncation,
            LogProducerState producers,
            LogEnvironment env) {
        this.log = log;
        this.dir = log.dir();
        this.env = env;
        this.writeLock = writeLock;
        this.segments = segments;
        this.epochCache = epochCache;
        this.flusher = flusher;
        this.truncation = truncation;
        this.producers = producers;
    }

    /** True once {@link #close} (or a simulated crash) ran. Volatile read; any thread. */
    boolean isClosed() {
        return closed;
    }

    /** True while the log refuses writes after a failed one. Under the write lock. */
    boolean isFailed() {
        return failed;
    }

    /** A write failed: files and memory may disagree, refuse writes until reopened. Under the write lock. */
    void fail(Throwable e) {
        failed = true;
        failedBy = e;
    }

    /** An append succeeded: the next full episode reports {@link LogMetrics#diskFull} again. Under the write lock. */
    void appended() {
        diskFullReported = false;
    }

    /**
     * Reports a write that failed because the file system is full, once per full episode ({@link
     * LogMetrics#diskFull}). Under the write lock.
     */
    void writeFailed(String operation, IOException e) {
        if (!diskFullReported && StorageErrors.isNoSpace(e)) {
            diskFullReported = true;
            env.metrics().diskFull(dir, operation, e);
        }
    }

    /** Under the write lock: throws unless the log takes writes. */
    void checkWritable() throws IOException {
        if (closed) {
            throw new IllegalStateException("log " + dir + " is closed");
        }
        if (failed) {
            // With the failure as cause: a refusal after a full disk is recognisably a full disk too.
            throw new IOException("log " + dir + " had a failed write; reopen it to recover", failedBy);
        }
    }

    /** {@link UnifiedLog#reopen}: returns the log end offset after the reload. */
    long reopen() throws IOException {
        writeLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("log " + dir + " is closed");
            }
            failed = true; // until the load below succeeded
            if (!released) {
                released = true;
                for (LogSegment s : segments.snapshot()) {
                    try {
                        s.abandon();
                    } catch (IOException e) {
                        // Closing a channel whose file is reloaded below: nothing to keep from it.
                    }
                }
            }
            LogLoader.Loaded loaded;
            try {
                loaded = LogLoader.load(dir, log.config(), env);
            } catch (IOException | RuntimeException e) {
                failedBy = e;
                throw e;
            }
            segments.reload(
                    loaded.segments(), loaded.logStartOffset(), loaded.logEndOffset(), loaded.latestLeaderEpoch());
            epochCache.replaceWith(loaded.epochCache());
            flusher.reloaded(loaded.recoveryPoint());
            truncation.reloaded();
            producers.load(log, segments.endOffset());
            released = false;
            failed = false;
            failedBy = null;
            diskFullReported = false;
            return segments.endOffset();
        } finally {
            writeLock.unlock();
        }
    }

    /** {@link UnifiedLog#crashForTesting}. */
    void crash() throws IOException {
        writeLock.lock();
        try {
            closed = true;
            producers.state.clear(); // its entries leave the broker's count (BrokerProducerIds)
            for (LogSegment s : segments.snapshot()) {
                s.abandon();
            }
        } finally {
            writeLock.unlock();
        }
    }

    /** {@link UnifiedLog#close}. */
    void close() throws IOException {
        writeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (released) {
                return; // a failed reopen released the files already; the next open recovers
            }
            IOException error = null;
            try {
                flusher.flush(segments);
            } catch (IOException e) {
                error = e;
            }
            for (LogSegment s : segments.snapshot()) {
                try {
                    s.close();
                } catch (IOException e) {
                    if (error == null) {
                        error = e;
                    } else {
                        error.addSuppressed(e);
                    }
                }
            }
            if (error != null) {
                throw error;
            }
            if (!failed) {
                producers.snapshot(segments.endOffset());
                flusher.writeCheckpoints(segments.startOffset());
                LogLoader.writeCleanShutdownMarker(dir);
            }
        } finally {
            if (closed) {
                // A closed log keeps no producer ids: they leave the broker's count (BrokerProducerIds).
                producers.state.clear();
            }
            writeLock.unlock();
        }
    }
}
