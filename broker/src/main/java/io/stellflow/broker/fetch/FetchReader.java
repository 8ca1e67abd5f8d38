package io.stellflow.broker.fetch;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.fetch.FetchPlan.PartitionPlan;
import io.stellflow.broker.fetch.FetchPlan.TopicPlan;
import io.stellflow.broker.network.FetchResponseFrame;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.telemetry.CompressionTelemetry;
import io.stellflow.broker.telemetry.TopicThroughput;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponseEncoder;
import io.stellflow.protocol.message.FetchResponseLayout;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.server.common.telemetry.LogThrottle;
import io.stellflow.storage.AbortedTxn;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evaluates a {@link FetchPlan} into a {@link FetchResponseFrame} ({@code
 * docs/spec/wire-protocol.md} §6.4 steps 2-5, decisions 9.d, 9.f, 9.g). The bytes are {@link
 * FetchResponseLayout}'s, v0 and v1, written by a {@link FetchResponseEncoder}; this class decides
 * which batches go out and whether they are file regions or copied bytes.
 *
 * <ul>
 *   <li>Readable bound: the high watermark for consumers at isolationLevel 0, the last stable offset at
 *       isolationLevel 1, the log end offset for followers ({@code replicaId >= 0}).
 *   <li>{@code fetchOffset} below logStartOffset or above the log end offset:
 *       {@code OFFSET_OUT_OF_RANGE}; from the bound up to the log end offset: no records, no error.
 *   <li>Whole batches only; each partition stops before exceeding {@code partitionMaxBytes} and the
 *       response before exceeding {@code maxBytes}, except that a partition's first batch ignores
 *       {@code partitionMaxBytes} and the first batch of the first partition with data also ignores
 *       {@code maxBytes}. The response never exceeds the frame limit.
 *   <li>v0: each returned batch's baseOffsetDelta is rewritten to {@code batchBaseOffset -
 *       fetchOffset}. Zero-copy: the 4 new bytes go into the head buffer and the rest of the batch
 *       (its bytes 4..size) is a {@link SegmentFileRegion}; copy mode: the batch is read into the
 *       head and patched there (same bytes on the wire).
 *   <li>v0 and a compressed stored batch: the batch goes out decompressed (copied into the head,
 *       codec bits cleared, CRC recomputed), since the public SDKs cannot decompress (issue #21).
 *       The limits above then apply to the bytes written (decompressed sizes): batches are selected
 *       by their stored sizes, and the v0 emission stops before the first batch past a limit (the
 *       reader fetches it next time). A first batch of the first partition with data that
 *       decompresses to more than the frame can hold can never be served over v0: its partition is
 *       answered {@code MESSAGE_TOO_LARGE} (not retriable), with a rate-limited WARN line.
 *   <li>v1: a partition's records are stored batches of ONE segment, untouched (one region), with
 *       the segment's base offset in {@code recordsBaseOffset}.
 *   <li>Consumers ({@code replicaId -1}, either isolation level, v0 and v1) never receive control
 *       batches (decision 9.l): they are skipped while collecting, the data batches between them
 *       keep their zero-copy regions. A consumer fetching at a marker's offset gets the data after
 *       it (the read goes on past markers); with nothing after it, an empty answer (after the long
 *       poll), and its offset stays at the marker until data follows.
 *   <li>isolationLevel 1: the aborted transactions overlapping the returned offsets are listed
 *       ({@code abortedTransactions}: producerId, first offset), {@link UnifiedLog#abortedTransactions}.
 *       The lists count against the frame limit (16 bytes per entry), not against {@code maxBytes}:
 *       when the chosen batches and their list would not fit the frame, the last batches are left
 *       for the next fetch; a first batch of the response that cannot fit with its list answers its
 *       partition {@code MESSAGE_TOO_LARGE} (not retriable), with a rate-limited WARN line.
 *   <li>A read failure answers that partition {@code BROKER_NOT_AVAILABLE} (STORAGE_ERROR's v0
 *       fallback) with no records; one ERROR line with the stack trace per {@value
 *       #LOG_INTERVAL_SECONDS} s, the others at DEBUG (a client retries a damaged segment forever).
 * </ul>
 *
 * <p>Thread-safety: one instance per broker, shared by the request handler threads; no state but
 * its log throttles (any thread). It does file I/O: batch headers always, record bytes in copy mode
 * and for compressed batches in v0.
 */
public final class FetchReader {
    private static final Logger LOG = LoggerFactory.getLogger(FetchReader.class);

    /** Seconds between two WARN (a batch too large for v0, or with its aborted list) or two ERROR (read failure) lines. */
    static final long LOG_INTERVAL_SECONDS = 10;

    /** {@link #emitV0}: the partition's first batch does not fit what it may take (nothing written). */
    private static final int FIRST_BATCH_TOO_LARGE = -1;

    /**
     * Head bytes to reserve per expected batch in zero-copy mode (the v0 4-byte patch), for the first
     * allocation only; the head grows if more batches come.
     */
    private static final int PATCH_BYTES = FetchResponseLayout.V0_BATCH_PREFIX_BYTES;

    private final boolean zeroCopy;
    private final LogThrottle tooLargeLines;
    private final LogThrottle readFailureLines;

    /** @param zeroCopy true: log bytes are {@link SegmentFileRegion}s; false: copied into the head */
    public FetchReader(boolean zeroCopy) {
        this.zeroCopy = zeroCopy;
        this.tooLargeLines = new LogThrottle(System::nanoTime, LOG_INTERVAL_SECONDS);
        this.readFailureLines = new LogThrottle(System::nanoTime, LOG_INTERVAL_SECONDS);
    }

    /** Reads every partition of the plan now into a new response frame owned by the result. */
    public FetchResult read(FetchPlan plan, RequestContext context) {
        ByteBuf head = context.newResponseFrame(sizeHint(plan, zeroCopy));
        FetchResponseFrame frame = new FetchResponseFrame(head);
        try {
            FetchResult result = readInto(
                    plan,
                    frame,
                    context.header().apiVersion(),
                    context.metrics().compression());
            context.recordStats(plan.partitions().size(), result.recordsBytes(), result.records());
            if (result.hasError()) {
                context.markPartitionError();
            }
            return result;
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    /**
     * The envelope alone when no partition has records to return (an idle long-poll check costs one
     * small buffer); with records, zero-copy adds room for 256 batch patches, copy mode maxBytes
     * capped at 1 MiB (the SDKs' maxBytes; the buffer grows past that).
     */
    private static int sizeHint(FetchPlan plan, boolean zeroCopy) {
        long hint = plan.envelopeBytes() + 4L;
        for (TopicPlan topic : plan.topics()) {
            for (PartitionPlan p : topic.partitions()) {
                if (p.partition() != null
                        && p.request().fetchOffset() < p.partition().logEndOffset()) {
                    long records =
                            zeroCopy ? 256L * PATCH_BYTES : plan.request().maxBytes();
                    return (int) Math.min(hint + records, Math.max(hint, 1 << 20));
                }
            }
        }
        return (int) Math.min(hint, 1 << 20);
    }

    private FetchResult readInto(
            FetchPlan plan, FetchResponseFrame frame, short version, CompressionTelemetry compression) {
        ByteBuf out = frame.head();
        FetchRequest request = plan.request();
        long frameBudget = plan.recordsBudgetBytes();
        long remaining = Math.min(request.maxBytes(), frameBudget);
        long total = 0;
        long listBytes = 0; // of the aborted-transaction lists written (read_committed)
        long totalRecords = 0;
        boolean hasError = false;
        long[] bounds = new long[plan.partitions().size()];
        int resolved = 0;
        BatchCollector batches = new BatchCollector(version >= FetchResponseLayout.VERSION_1);
        FetchResponseEncoder encoder =
                new FetchResponseEncoder().wrap(out, version, plan.topics().size());
        for (TopicPlan topic : plan.topics()) {
            encoder.topic(topic.topic(), topic.partitions().size());
            for (PartitionPlan p : topic.partitions()) {
                int id = p.request().partition();
                if (p.partition() == null) {
                    hasError = true;
                    encoder.partition(id, p.errorCode(), -1L, -1L, -1L);
                    continue;
                }
                Partition partition = p.partition();
                long logEnd = partition.logEndOffset();
                long highWatermark = partition.highWatermark();
                long lastStable = partition.lastStableOffset();
                long logStart = partition.logStartOffset();
                long bound = request.replicaId() >= 0
                        ? logEnd
                        : request.isolationLevel() == FetchRequest.READ_COMMITTED ? lastStable : highWatermark;
                bounds[resolved++] = bound;
                if (!partition.leadsAt(p.leaderEpoch())) {
                    // Deposed since the plan (a parked Fetch outlives leadership changes): a follower's
                    // HW and LSO lag its leader's and may be below what this Fetch's client saw.
                    hasError = true;
                    encoder.partition(id, Errors.NOT_LEADER_OR_FOLLOWER, -1L, -1L, -1L);
                    continue;
                }
                if (request.replicaId() < 0 && partition.highWatermarkBelowEpochStart()) {
                    // A new leader whose HW has not yet caught up with its predecessor's: retriable.
                    hasError = true;
                    encoder.partition(id, Errors.NOT_LEADER_OR_FOLLOWER, -1L, -1L, -1L);
                    continue;
                }
                long fetchOffset = p.request().fetchOffset();
                if (fetchOffset < logStart || fetchOffset > logEnd) {
                    hasError = true;
                    encoder.partition(id, Errors.OFFSET_OUT_OF_RANGE, highWatermark, logStart, lastStable);
                    continue;
                }
                encoder.partition(id, Errors.NONE, highWatermark, logStart, lastStable);
                if (fetchOffset >= bound || remaining <= 0) {
                    continue;
                }
                int recordsStart = encoder.recordsStart();
                int regionMark = frame.regionCount();
                boolean consumer = request.replicaId() < 0;
                // What the frame still holds: the aborted-transaction lists (read_committed) are in it too.
                long frameLeft = frameBudget - total - listBytes;
                if (frameLeft <= 0) {
                    continue;
                }
                try {
                    int bytes = 0;
                    // A consumer's read goes on past control batches it skipped with nothing kept.
                    for (long from = fetchOffset; from < bound; from = batches.skippedThrough() + 1) {
                        batches.reset(consumer);
                        bytes = selectBatches(
                                partition,
                                from,
                                bound,
                                p.request().partitionMaxBytes(),
                                Math.min(remaining, frameLeft),
                                total == 0,
                                frameLeft,
                                batches);
                        if (batches.count() > 0 || batches.skippedThrough() < from) {
                            break;
                        }
                    }
                    if (bytes == 0) {
                        continue;
                    }
                    if (consumer && request.isolationLevel() == FetchRequest.READ_COMMITTED) {
                        List<AbortedTxn> aborted =
                                partition.log().abortedTransactions(fetchOffset, batches.lastOffset() + 1);
                        int keep = fittingWithList(batches, aborted, frameLeft);
                        if (keep == 0) {
                            if (total == 0) {
                                // First in the response, the batch and its list still pass the frame:
                                // no retry can serve it (else it comes first in a later response).
                                logListTooLarge(partition, batches, aborted.size(), frameLeft);
                                encoder.failPartition(Errors.MESSAGE_TOO_LARGE);
                                hasError = true;
                            }
                            continue;
                        }
                        batches.keepFirst(keep);
                        bytes = batches.totalBytes();
                        // v0 may leave trailing batches out after this (emitV0): the list then also
                        // names aborted transactions past the returned range, which a reader only
                        // meets with later batches (it consumes the list up to each batch's offsets).
                        int listed = abortedTransactions(encoder, aborted, batches.lastOffset() + 1);
                        long entryListBytes = (long) listed * FetchResponseLayout.ABORTED_TRANSACTION_BYTES;
                        listBytes += entryListBytes;
                        frameLeft -= entryListBytes;
                        recordsStart = encoder.recordsStart();
                    }
                    if (version >= FetchResponseLayout.VERSION_1) {
                        emitV1(frame, encoder, batches, zeroCopy);
                    } else {
                        // Decompressed sizes are known only now: the limits of selectBatches again.
                        long firstBatchMaxBytes = total == 0 ? frameLeft : Math.min(remaining, frameLeft);
                        long partitionMaxBytes =
                                Math.min(p.request().partitionMaxBytes(), Math.min(remaining, frameLeft));
                        bytes = emitV0(
                                frame,
                                encoder,
                                batches,
                                fetchOffset,
                                zeroCopy,
                                firstBatchMaxBytes,
                                partitionMaxBytes,
                                compression);
                        if (bytes == FIRST_BATCH_TOO_LARGE) {
                            frame.truncate(regionMark, recordsStart);
                            if (total == 0) {
                                // Even alone in a response it does not fit: no retry can serve it.
                                logTooLarge(partition, batches, firstBatchMaxBytes);
                                encoder.failPartition(Errors.MESSAGE_TOO_LARGE);
                                hasError = true;
                            }
                            continue; // else the reader gets it in a response where it comes first
                        }
                    }
                    encoder.recordsLength(bytes);
                    remaining -= bytes;
                    total += bytes;
                    totalRecords += batches.records();
                    TopicThroughput.Counters topicCounters = partition.topicCounters();
                    if (topicCounters != null) {
                        topicCounters.fetched(bytes);
                    }
                } catch (IOException e) {
                    logReadFailure(partition, fetchOffset, e);
                    frame.truncate(regionMark, recordsStart);
                    encoder.failPartition(Errors.BROKER_NOT_AVAILABLE);
                    hasError = true;
                }
            }
        }
        return new FetchResult(frame, total, hasError, bounds, totalRecords);
    }

    /**
     * The WARN line (one per {@value #LOG_INTERVAL_SECONDS} s, the others at DEBUG, no stack trace)
     * of a stored compressed batch that decompresses to more than a v0 response can hold.
     */
    private void logTooLarge(Partition partition, BatchCollector batches, long maxBytes) {
        String codec = CompressionType.forId(batches.codec(0)).configName();
        if (tooLargeLines.tryAcquire()) {
            LOG.warn(
                    "Fetch v0 of {} at offset {} answered MESSAGE_TOO_LARGE: the stored {} batch decompresses"
                            + " to more than the {} bytes a response can hold (frame limit {}; keep"
                            + " compression.max.decompressed.bytes below it on topics read by SDKs);"
                            + " {}further ones within {} s at DEBUG",
                    partition,
                    batches.baseOffset(0),
                    codec,
                    maxBytes,
                    Frames.MAX_FRAME_LENGTH,
                    tooLargeLines.takeSuppressedNote("WARN"),
                    LOG_INTERVAL_SECONDS);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "Fetch v0 of {} at offset {} answered MESSAGE_TOO_LARGE: {} batch over {} bytes decompressed",
                    partition,
                    batches.baseOffset(0),
                    codec,
                    maxBytes);
        }
    }

    /**
     * The WARN line (shared throttle with {@link #logTooLarge}) of a read_committed batch that, with
     * the aborted transactions it overlaps, passes what a response can hold.
     */
    private void logListTooLarge(Partition partition, BatchCollector batches, int aborted, long maxBytes) {
        if (tooLargeLines.tryAcquire()) {
            LOG.warn(
                    "Fetch (read_committed) of {} at offset {} answered MESSAGE_TOO_LARGE: the {}-byte batch and"
                            + " its list of up to {} aborted transactions (16 bytes each) pass the {} bytes a"
                            + " response can hold; {}further ones within {} s at DEBUG",
                    partition,
                    batches.baseOffset(0),
                    batches.size(0),
                    aborted,
                    maxBytes,
                    tooLargeLines.takeSuppressedNote("WARN"),
                    LOG_INTERVAL_SECONDS);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "Fetch (read_committed) of {} at offset {} answered MESSAGE_TOO_LARGE: batch and aborted list"
                            + " over {} bytes",
                    partition,
                    batches.baseOffset(0),
                    maxBytes);
        }
    }

    /**
     * The ERROR line of a failed read (a damaged segment), with its stack trace: one per {@value
     * #LOG_INTERVAL_SECONDS} s, the others at DEBUG (the client retries BROKER_NOT_AVAILABLE).
     */
    private void logReadFailure(Partition partition, long fetchOffset, IOException e) {
        if (readFailureLines.tryAcquire()) {
            LOG.error(
                    "Fetch read on {} at offset {} failed; {}further read failures within {} s at DEBUG",
                    partition,
                    fetchOffset,
                    readFailureLines.takeSuppressedNote("ERROR"),
                    LOG_INTERVAL_SECONDS,
                    e);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug("Fetch read on {} at offset {} failed: {}", partition, fetchOffset, e.toString());
        }
    }

    /**
     * How many of the collected batches fit {@code frameLeft} bytes together with the entries of
     * {@code aborted} that overlap them (16 bytes each): all of them unless a long list pushes the
     * last ones out; 0 when not even the first fits.
     *
     * @param aborted aborted transactions from the fetch offset on, ascending by marker offset
     */
    static int fittingWithList(BatchCollector batches, List<AbortedTxn> aborted, long frameLeft) {
        long bytes = batches.totalBytes();
        for (int keep = batches.count(); keep > 0; keep--) {
            long upper = batches.lastOffset(keep - 1) + 1;
            long listBytes = (long) overlapping(aborted, upper) * FetchResponseLayout.ABORTED_TRANSACTION_BYTES;
            if (bytes + listBytes <= frameLeft) {
                return keep;
            }
            bytes -= batches.size(keep - 1);
        }
        return 0;
    }

    /** Entries of {@code aborted} whose first offset is below {@code upperExclusive}. */
    private static int overlapping(List<AbortedTxn> aborted, long upperExclusive) {
        int count = 0;
        for (AbortedTxn t : aborted) {
            if (t.firstOffset() < upperExclusive) {
                count++;
            }
        }
        return count;
    }

    /**
     * Lists in the entry those of {@code aborted} (from the fetch offset on, ascending by marker)
     * whose first offset is below {@code upperExclusive}, the ones overlapping the returned batches;
     * returns how many.
     */
    private static int abortedTransactions(
            FetchResponseEncoder encoder, List<AbortedTxn> aborted, long upperExclusive) {
        int count = overlapping(aborted, upperExclusive);
        if (count == 0) {
            return 0;
        }
        long[] pairs = new long[count * 2];
        int i = 0;
        for (AbortedTxn t : aborted) {
            if (t.firstOffset() < upperExclusive) {
                pairs[2 * i] = t.producerId();
                pairs[2 * i + 1] = t.firstOffset();
                i++;
            }
        }
        encoder.abortedTransactions(pairs, count);
        return count;
    }

    /**
     * Collects the whole batches of one partition to return and returns their total bytes.
     *
     * @param first whether no earlier partition returned data (its first batch may exceed maxBytes)
     * @param frameBudget records bytes left before the response would exceed the frame limit
     */
    private static int selectBatches(
            Partition partition,
            long fetchOffset,
            long bound,
            int partitionMaxBytes,
            long remaining,
            boolean first,
            long frameBudget,
            BatchCollector batches)
            throws IOException {
        int limit = (int) Math.min(partitionMaxBytes, remaining);
        if (first) {
            // First partition with data: its first batch is exempt from both limits (decision 9.g
            // of docs/spec/wire-protocol.md).
            partition.log().read(fetchOffset, limit, bound, true, batches);
            return dropIfAbove(batches, frameBudget);
        }
        if (partitionMaxBytes >= remaining) {
            partition.log().read(fetchOffset, limit, bound, false, batches);
            return batches.totalBytes();
        }
        // The first batch may exceed partitionMaxBytes but not what is left of maxBytes.
        partition.log().read(fetchOffset, limit, bound, true, batches);
        return dropIfAbove(batches, Math.min(remaining, frameBudget));
    }

    private static int dropIfAbove(BatchCollector batches, long max) {
        if (batches.totalBytes() > max) {
            batches.reset();
            return 0;
        }
        return batches.totalBytes();
    }

    /**
     * v0: each batch with bytes 0-3 rewritten to {@code baseOffset - fetchOffset}: zero-copy, the 4
     * new bytes in the head and the rest of the batch as a region; copy mode, the batch read into
     * the head and patched there. A compressed batch is decompressed into the head ({@link
     * V0Decompression}). The limits of {@link #selectBatches} apply again to the bytes written
     * (decompressed sizes): the first batch may take up to {@code firstBatchMaxBytes}, and the
     * emission stops before a later batch that would take the partition past {@code maxBytes}; the
     * batches left out are dropped from {@code batches} ({@link BatchCollector#keepFirst}).
     *
     * @param firstBatchMaxBytes the frame budget for the first batch of the first partition with
     *     data (exempt from maxBytes and partitionMaxBytes), else what is left of maxBytes
     * @param maxBytes min(partitionMaxBytes, what is left of maxBytes), for the partition's total
     * @return the records bytes written, or {@link #FIRST_BATCH_TOO_LARGE} (nothing written)
     */
    private static int emitV0(
            FetchResponseFrame frame,
            FetchResponseEncoder encoder,
            BatchCollector batches,
            long fetchOffset,
            boolean zeroCopy,
            long firstBatchMaxBytes,
            long maxBytes,
            CompressionTelemetry compression)
            throws IOException {
        ByteBuf out = frame.head();
        int written = 0;
        int i = 0;
        for (; i < batches.count(); i++) {
            long position = batches.position(i);
            int size = batches.size(i);
            int codec = batches.codec(i);
            long room = i == 0 ? firstBatchMaxBytes : maxBytes - written;
            if (i > 0 && room < RecordBatchLayout.RECORDS_OFFSET) {
                break; // no room left for even a batch header: neither read nor decompress it
            }
            if (codec != 0) {
                // An SDK reader cannot decompress (issue #21): this batch goes out uncompressed, copied.
                int at = out.writerIndex();
                long startNs = System.nanoTime();
                int n = V0Decompression.forThisThread().write(batches, i, codec, out, room);
                if (n == V0Decompression.TOO_LARGE) {
                    break;
                }
                encoder.v0RewriteBatchPrefix(at, batches.baseOffset(i), fetchOffset);
                compression.batch(
                        CompressionTelemetry.FETCH_V0,
                        CompressionType.forId(codec),
                        size - BatchCompression.HEADER_BYTES,
                        n - BatchCompression.HEADER_BYTES,
                        System.nanoTime() - startNs);
                written += n;
                continue;
            }
            if (size > room) {
                break; // after decompressed batches took more than their stored sizes
            }
            written += size;
            if (zeroCopy) {
                encoder.v0BatchPrefix(batches.baseOffset(i), fetchOffset);
                frame.addRegion(new SegmentFileRegion(
                        batches.channel(i),
                        position + FetchResponseLayout.V0_BATCH_PREFIX_BYTES,
                        size - FetchResponseLayout.V0_BATCH_PREFIX_BYTES));
            } else {
                int at = out.writerIndex();
                copy(batches, i, position, size, out);
                encoder.v0RewriteBatchPrefix(at, batches.baseOffset(i), fetchOffset);
            }
        }
        if (i == 0 && batches.count() > 0) {
            return FIRST_BATCH_TOO_LARGE;
        }
        batches.keepFirst(i); // the reader fetches the rest next time
        return written;
    }

    /**
     * v1: the stored bytes of the collected batches (contiguous, one segment), with
     * recordsBaseOffset = the first batch's base offset minus its stored baseOffsetDelta.
     */
    private static void emitV1(
            FetchResponseFrame frame, FetchResponseEncoder encoder, BatchCollector batches, boolean zeroCopy)
            throws IOException {
        ByteBuf out = frame.head();
        long position = batches.position(0);
        int total = batches.totalBytes();
        int storedDelta;
        if (zeroCopy) {
            out.ensureWritable(RecordBatchLayout.BATCH_LENGTH_OFFSET);
            readFully(batches, 0, position, RecordBatchLayout.BATCH_LENGTH_OFFSET, out, out.writerIndex());
            storedDelta = RecordBatchLayout.baseOffsetDelta(out, out.writerIndex());
            frame.addRegion(new SegmentFileRegion(batches.channel(0), position, total));
        } else {
            int at = out.writerIndex();
            copy(batches, 0, position, total, out);
            storedDelta = RecordBatchLayout.baseOffsetDelta(out, at);
        }
        encoder.v1RecordsBaseOffset(FetchResponseLayout.v1RecordsBaseOffset(batches.baseOffset(0), storedDelta));
    }

    private static void copy(BatchCollector batches, int i, long position, int size, ByteBuf out) throws IOException {
        out.ensureWritable(size);
        readFully(batches, i, position, size, out, out.writerIndex());
        out.writerIndex(out.writerIndex() + size);
    }

    private static void readFully(BatchCollector batches, int i, long position, int size, ByteBuf out, int index)
            throws IOException {
        int copied = 0;
        while (copied < size) {
            int n = out.setBytes(index + copied, batches.channel(i), position + copied, size - copied);
            if (n < 0) {
                throw new IOException("unexpected end of segment file at " + (position + copied));
            }
            copied += n;
        }
    }
}
