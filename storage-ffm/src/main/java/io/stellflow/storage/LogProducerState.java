package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link ProducerStateManager} of one {@link UnifiedLog} and how it follows the log: rebuilt at
 * open, after a truncation and after a reopen from the newest readable snapshot not past the log end
 * (a corrupt one is deleted and the next older tried, then a full replay from the log start),
 * replaying only the batch headers after it; updated on every leader and follower append; snapshotted
 * ({@link ProducerSnapshotLayout}) when an append rolled the active segment and at clean close.
 *
 * <p>A retry is recognised by sequences and confirmed by content: {@link #contentDigest} of the new
 * batch (keys, values and headers, not timestamps: the Go SDK re-encodes a retried batch with a new
 * timestamp; compressed batches byte for byte) must equal the remembered batch's. That digest is
 * taken from the stored batch just before retention or compaction may remove it ({@link
 * #digestBeforeRemoval}, under the same write lock hold as the removal, or before the compaction
 * starts) and kept in the snapshots, so the comparison outlives the stored batch; until then the
 * retry is compared with the stored bytes. Nothing is hashed on the append path. A replica that
 * copied a log already compacted holds the compacted batches, and digests those.
 *
 * <p>Control batches (transaction markers) go to {@link LogTransactions}, which keeps the open
 * transactions in the same state (and so in the same snapshots) and the aborted-transaction index.
 *
 * <p>Thread-safety: guarded by the owning log's write lock.
 */
final class LogProducerState {
    private static final Logger LOG = LoggerFactory.getLogger(LogProducerState.class);

    /** Bytes read per replay step: whole batches, their headers read positionally. */
    private static final int REPLAY_STEP_BYTES = 64 << 20;

    /** {@link #digestBuf}'s capacity kept between uses. */
    private static final int DIGEST_BUF_KEEP_BYTES = 1 << 20;

    private final UnifiedLog log;
    private final Path dir;
    private final LogEnvironment env;

    /** SHA-256 of {@link #contentDigest}, made at first use. */
    private MessageDigest sha;

    /** A reused buffer for one stored batch whose digest is taken. */
    private final ByteBuf digestBuf = Unpooled.buffer(RecordBatchLayout.RECORDS_OFFSET);

    final ProducerStateManager state;

    /** Markers, open transactions, the aborted index. */
    final LogTransactions transactions;

    /** A reused buffer for one whole control batch during a replay. */
    private final ByteBuf controlBuf = Unpooled.buffer(ControlRecordLayout.BATCH_SIZE, ControlRecordLayout.BATCH_SIZE);

    /** A reused buffer for one batch header during a replay. */
    private final ByteBuffer header = ByteBuffer.allocate(RecordBatchLayout.RECORDS_OFFSET);

    private final ByteBuf headerBuf = Unpooled.wrappedBuffer(header.array());

    /** Base offset of the active segment at the last snapshot check: a new one means a roll. */
    private long activeBase = -1;

    /**
     * A follower append's batches with a producer id, collected before the append rewrites their
     * bytes 0-3: base offsets and buffer positions. Grown as needed, reused.
     */
    private long[] pending = new long[8];

    private int[] pendingPos = new int[8];

    /** Where the last {@link #load} started replaying the log (tests: recovery reads only the tail). */
    long replayedFrom = -1;

    LogProducerState(UnifiedLog log, Path dir, LogEnvironment env) {
        ProducerStateConfig config = env.producerState();
        this.log = log;
        this.dir = dir;
        this.env = env;
        this.state = new ProducerStateManager(
                config.producerIdExpirationMs(), config.maxProducerIdsPerPartition(), env.producerIds());
        this.transactions = new LogTransactions(log, this);
    }

    /**
     * Rebuilds the state for a log ending at {@code logEnd}: snapshots past it are deleted (their
     * batches are gone), the newest readable one at or below it is loaded, and the log after it is
     * replayed. The aborted-transaction index keeps its entries below the replay start and gets the
     * later ones again from the replay.
     *
     * @return the offset the replay started from (the snapshot's, or the log start)
     */
    long load(UnifiedLog log, long logEnd) throws IOException {
        state.clear();
        TreeMap<Long, Path> snapshots = ProducerSnapshotLayout.list(dir);
        for (Map.Entry<Long, Path> s : snapshots.tailMap(logEnd, false).entrySet()) {
            Files.deleteIfExists(s.getValue());
        }
        long from = log.logStartOffset();
        for (Map.Entry<Long, Path> s :
                snapshots.headMap(logEnd, true).descendingMap().entrySet()) {
            try {
                state.load(ProducerSnapshotLayout.read(s.getValue(), s.getKey()));
                from = s.getKey();
                break;
            } catch (IOException e) {
                // Corrupt (or unreadable): an older snapshot or the log itself rebuilds the state.
                Files.deleteIfExists(s.getValue());
                LOG.warn("Dropped producer snapshot {}: {}; rebuilding from the log", s.getValue(), e.getMessage());
            }
        }
        transactions.aborted.load(transactions.segmentBases(), from, log.logStartOffset());
        replay(log, from, logEnd);
        transactions.publish();
        activeBase = log.activeSegmentBaseOffset();
        replayedFrom = from;
        return from;
    }

    /**
     * Replays the batch headers in [from, logEnd). A data batch counts as appended at the replay's
     * time (the broker's clock now), not at its max timestamp: that is the producer's CreateTime,
     * which may lie far in the past (backfilled data, a skewed clock), and would expire the producer
     * at the next retention check after a crash, so a retry of its acknowledged batch would be
     * written again. A replayed producer therefore lives at most {@code producer.id.expiration.ms}
     * past the replay. Markers keep their timestamps (the broker wrote them).
     */
    private void replay(UnifiedLog log, long from, long logEnd) throws IOException {
        long replayMs = env.nowMs();
        long next = from;
        long[] last = {next - 1};
        while (next < logEnd) {
            int read = log.read(next, REPLAY_STEP_BYTES, logEnd, true, (ch, pos, size, base, lastOffset) -> {
                header.clear();
                readFully(ch, header, pos, base);
                long timestampMs = RecordBatchLayout.maxTimestamp(headerBuf, 0);
                if (ControlRecordLayout.isControl(headerBuf, 0)) {
                    if (size == ControlRecordLayout.BATCH_SIZE) { // else not ours: ignored
                        ByteBuffer whole = ByteBuffer.wrap(controlBuf.array());
                        readFully(ch, whole, pos, base);
                        controlBuf.setIndex(0, ControlRecordLayout.BATCH_SIZE);
                        transactions.applyControl(controlBuf, 0, base, timestampMs);
                    }
                } else {
                    applyHeader(headerBuf, 0, base, lastOffset, replayMs);
                }
                last[0] = lastOffset;
            });
            if (read == 0 || last[0] + 1 <= next) {
                break;
            }
            next = last[0] + 1;
        }
    }

    private void readFully(FileChannel ch, ByteBuffer into, long pos, long base) throws IOException {
        while (into.hasRemaining()) {
            if (ch.read(into, pos + into.position()) < 0) {
                throw new IOException("batch at " + base + " ends early in " + dir);
            }
        }
    }

    /** Records a stored data batch (header at {@code pos}) if it carries a producer id. */
    private void applyHeader(ByteBuf b, int pos, long base, long lastOffset, long timestampMs) {
        long pid = RecordBatchLayout.producerId(b, pos);
        if (pid < 0) {
            return;
        }
        int baseSeq = RecordBatchLayout.baseSequence(b, pos);
        int lastSeq = ProducerStateManager.lastSequence(baseSeq, RecordBatchLayout.lastOffsetDelta(b, pos) + 1);
        state.update(pid, RecordBatchLayout.producerEpoch(b, pos), baseSeq, lastSeq, base, lastOffset, timestampMs);
    }

    /**
     * Before a follower append: remembers the base offset and position of each batch carrying a
     * producer id (the append rewrites bytes 0-3 in place). Returns how many, for {@link
     * #followerAppended}.
     */
    int collectFollower(ByteBuf records, int start, int end, long fetchOffset) {
        int n = 0;
        for (int p = start; p < end; p += RecordBatchLayout.batchSize(records, p)) {
            if (RecordBatchLayout.producerId(records, p) >= 0) {
                if (n == pending.length) {
                    pending = Arrays.copyOf(pending, n * 2);
                    pendingPos = Arrays.copyOf(pendingPos, n * 2);
                }
                pending[n] = fetchOffset + RecordBatchLayout.baseOffsetDelta(records, p);
                pendingPos[n++] = p;
            }
        }
        return n;
    }

    /** After a follower append of what {@link #collectFollower} found ({@code n} batches). */
    void followerAppended(ByteBuf records, int n, long nowMs) throws IOException {
        for (int i = 0; i < n; i++) {
            int p = pendingPos[i];
            long base = pending[i];
            if (ControlRecordLayout.isControl(records, p)) {
                transactions.applyControl(records.slice(p, RecordBatchLayout.batchSize(records, p)), 0, base, nowMs);
            } else {
                applyHeader(records, p, base, base + RecordBatchLayout.lastOffsetDelta(records, p), nowMs);
            }
        }
    }

    /** {@link #checkLeader}: the batch is the producer's next one; append it. */
    static final long APPEND = Long.MIN_VALUE;

    /**
     * A leader's check of one idempotent batch before its append ({@link ProducerStateManager#check}).
     *
     * @return {@link #APPEND}; a retry's original base offset; or {@link
     *     UnifiedLog#OUT_OF_ORDER_SEQUENCE}, {@link UnifiedLog#INVALID_PRODUCER_EPOCH}, {@link
     *     UnifiedLog#TOO_MANY_PRODUCER_IDS}, {@link UnifiedLog#TOO_MANY_PRODUCER_IDS_ON_BROKER}
     */
    long checkLeader(ByteBuf batch, int pos, long nowMs) throws IOException {
        long pid = RecordBatchLayout.producerId(batch, pos);
        short epoch = RecordBatchLayout.producerEpoch(batch, pos);
        int baseSeq = RecordBatchLayout.baseSequence(batch, pos);
        int lastSeq = ProducerStateManager.lastSequence(baseSeq, RecordBatchLayout.recordCount(batch, pos));
        return switch (state.check(pid, epoch, baseSeq, lastSeq, nowMs)) {
            case ProducerStateManager.APPEND -> APPEND;
            case ProducerStateManager.DUPLICATE -> retried(batch, pos);
            case ProducerStateManager.INVALID_PRODUCER_EPOCH -> UnifiedLog.INVALID_PRODUCER_EPOCH;
            case ProducerStateManager.TOO_MANY_PRODUCER_IDS -> UnifiedLog.TOO_MANY_PRODUCER_IDS;
            case ProducerStateManager.TOO_MANY_PRODUCER_IDS_ON_BROKER -> UnifiedLog.TOO_MANY_PRODUCER_IDS_ON_BROKER;
            default -> UnifiedLog.OUT_OF_ORDER_SEQUENCE;
        };
    }

    /**
     * A batch whose sequences match a remembered one ({@link ProducerStateManager#DUPLICATE}): its
     * original base offset when it holds the same records as the remembered batch (by the digest
     * kept in the state, or while that is not known yet by the stored batch's), else {@link
     * UnifiedLog#OUT_OF_ORDER_SEQUENCE}; also when neither digest nor stored batch is there, so a
     * different payload under a reused sequence is never taken for the retry.
     */
    long retried(ByteBuf batch, int pos) throws IOException {
        long base = state.duplicateBaseOffset();
        long known = state.duplicateDigest();
        long stored = known != ProducerStateManager.NO_DIGEST ? known : storedDigest(base);
        if (stored == ProducerStateManager.NO_DIGEST) {
            return UnifiedLog.OUT_OF_ORDER_SEQUENCE;
        }
        return contentDigest(batch, pos, sha()) == stored ? base : UnifiedLog.OUT_OF_ORDER_SEQUENCE;
    }

    /**
     * The content digest of the stored batch whose base offset is {@code base} (read whatever the
     * log start offset), {@link ProducerStateManager#NO_DIGEST} when no batch starts there (removed,
     * or rewritten by compaction).
     */
    private long storedDigest(long base) throws IOException {
        long[] digest = {ProducerStateManager.NO_DIGEST};
        log.read(base, 1, Long.MAX_VALUE, true, (ch, p, size, batchBase, lastOffset) -> {
            if (batchBase != base) {
                return;
            }
            if (digestBuf.capacity() < size) {
                digestBuf.capacity(size);
            }
            ByteBuffer into = digestBuf.internalNioBuffer(0, size);
            readFully(ch, into, p, batchBase);
            digestBuf.setIndex(0, size);
            digest[0] = contentDigest(digestBuf, 0, sha());
        });
        if (digestBuf.capacity() > DIGEST_BUF_KEEP_BYTES) {
            digestBuf.capacity(DIGEST_BUF_KEEP_BYTES); // one large batch does not pin its size
        }
        return digest[0];
    }

    /**
     * Before retention or compaction may remove batches below {@code belowOffset} (the active
     * segment's base: they only touch sealed segments): sets the content digest of every remembered
     * batch there that has none, from its stored bytes, and if any was set writes a snapshot at
     * {@code logEnd}, so the digests are durable before the batches can go. At most {@value
     * ProducerStateManager#BATCHES_PER_PRODUCER} batches per producer id, and only those remembered
     * now: batches the producer's later ones pushed out of the state are never read.
     *
     * @return how many digests were set
     */
    int digestBeforeRemoval(long belowOffset, long logEnd) throws IOException {
        int set = state.captureDigests(belowOffset, this::storedDigest);
        if (set > 0) {
            snapshot(logEnd);
        }
        return set;
    }

    private MessageDigest sha() {
        if (sha == null) {
            try {
                sha = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("every JDK has SHA-256", e);
            }
        }
        return sha;
    }

    /** After a leader append of one idempotent batch at {@code base}. */
    void leaderAppended(ByteBuf batch, int pos, long base, long nowMs) {
        applyHeader(batch, pos, base, base + RecordBatchLayout.lastOffsetDelta(batch, pos), nowMs);
    }

    /** After any append: a snapshot at {@code logEnd} when the active segment changed (a roll). */
    void maybeSnapshotAfterRoll(long activeBaseOffset, long logEnd) throws IOException {
        if (activeBaseOffset != activeBase) {
            activeBase = activeBaseOffset;
            snapshot(logEnd);
        }
    }

    /** Writes a snapshot of the state at {@code logEnd} (every batch below it applied). */
    void snapshot(long logEnd) throws IOException {
        transactions.aborted.force(); // no snapshot may cover an index entry a power loss can lose
        List<ProducerStateManager.Entry> entries = state.entries();
        ProducerSnapshotLayout.write(dir, logEnd, entries);
    }

    /** Deletes every snapshot (the log restarts empty). */
    void deleteSnapshots() throws IOException {
        for (Path p : ProducerSnapshotLayout.list(dir).values()) {
            Files.deleteIfExists(p);
        }
        state.clear();
        transactions.aborted.clear();
        transactions.publish();
    }

    /**
     * The content digest of the batch at {@code pos}: the first 8 bytes (big-endian) of a SHA-256 over
     * its attributes and record count and, per record, the length, attributes, offset delta, key,
     * value and headers, not the timestamps (the Go SDK re-encodes a retried batch with a new
     * timestamp); over the compressed bytes of a compressed batch. Never {@link
     * ProducerStateManager#NO_DIGEST} for a well-formed batch (a digest of 0 becomes 1); {@link
     * ProducerStateManager#NO_DIGEST} when the records do not parse. Off the append path: computed
     * only for a retry and for the remembered batches before retention or compaction.
     */
    static long contentDigest(ByteBuf b, int pos, MessageDigest sha) {
        sha.reset();
        int attrs = RecordBatchLayout.attributes(b, pos);
        int count = RecordBatchLayout.recordCount(b, pos);
        for (int shift = 8; shift >= 0; shift -= 8) {
            sha.update((byte) (attrs >>> shift));
        }
        for (int shift = 24; shift >= 0; shift -= 8) {
            sha.update((byte) (count >>> shift));
        }
        int end = pos + RecordBatchLayout.batchSize(b, pos);
        int r = pos + RecordBatchLayout.RECORDS_OFFSET;
        if ((attrs & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
            update(sha, b, r, end - r);
            r = end;
        }
        // Fixed-width record fields: length int32, attributes int8, timestampDelta int64, then
        // offsetDelta, key, value and headers to the record's end (RecordBatchLayout).
        while (r < end) {
            int len = b.getInt(r);
            if (len < 13 || r + 4 + len > end) {
                return ProducerStateManager.NO_DIGEST;
            }
            update(sha, b, r, 5); // length and attributes
            update(sha, b, r + 13, len - 9); // after the timestampDelta
            r += 4 + len;
        }
        if (r != end) {
            return ProducerStateManager.NO_DIGEST;
        }
        long d = ByteBuffer.wrap(sha.digest()).getLong();
        return d == ProducerStateManager.NO_DIGEST ? 1 : d;
    }

    private static void update(MessageDigest sha, ByteBuf b, int index, int length) {
        if (b.hasArray()) {
            sha.update(b.array(), b.arrayOffset() + index, length);
        } else {
            sha.update(b.nioBuffer(index, length));
        }
    }
}
