package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * The child JVM of {@link TxnCrashTest}: opens (recovering) the log, then runs transactions of
 * three producers in a loop (transactional batches, commits and aborts, interleaved) until it is
 * killed, flushing now and then. Prints {@code OPENED} once the log is open.
 *
 * <p>Usage: {@code TxnCrashChild <partitionDir> <seed>}.
 */
final class TxnCrashChild {
    /** Small segments: kills land in rolls, snapshots and index writes too. */
    static final LogConfig CONFIG = LogConfig.builder()
            .segmentBytes(4 * 1024)
            .indexIntervalBytes(512)
            .indexMaxBytes(4096)
            .build();

    private TxnCrashChild() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        SplittableRandom random = new SplittableRandom(Long.parseLong(args[1]));
        UnifiedLog log = UnifiedLog.open(dir, CONFIG);
        System.out.println("OPENED " + log.logEndOffset());
        System.out.flush();
        for (long step = 1; ; step++) {
            long pid = 1 + random.nextInt(3);
            int r = random.nextInt(10);
            if (r < 6) {
                log.writeLock().lock();
                int seq;
                long txnSeq;
                try {
                    seq = Math.max(log.producerState().nextSequence(pid), 0);
                    txnSeq = log.producerState().openTransactionSequence(pid);
                } finally {
                    log.writeLock().unlock();
                }
                ByteBuf out = Unpooled.buffer();
                RecordBatchBuilder b = new RecordBatchBuilder(out, System.currentTimeMillis());
                b.append(System.currentTimeMillis(), null, ("p" + pid + "s" + seq).getBytes(StandardCharsets.UTF_8));
                b.close();
                RecordBatchLayout.setProducerFields(out, 0, pid, (short) 0, seq);
                long appended = log.appendTransactionalAsLeader(out, 1, null, txnSeq >= 0 ? txnSeq : step);
                out.release();
                if (appended < 0) {
                    throw new IllegalStateException("refused " + appended + " for producer " + pid);
                }
            } else {
                log.appendTransactionMarker(pid, (short) 0, r < 8, 0, step, 1);
            }
            if (step % 8 == 0) {
                log.flush();
            }
        }
    }
}
