package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Real logs in a temp dir for the replication unit tests: leader appends per epoch, byte comparison. */
final class ReplicaLogs {
    private ReplicaLogs() {}

    static UnifiedLog open(Path dir) throws IOException {
        return UnifiedLog.open(dir, LogConfig.defaults());
    }

    /** A follower partition over {@code log} (leader broker 1, epoch {@code leaderEpoch}). */
    static Partition follower(UnifiedLog log, int leaderEpoch) {
        Partition p = new Partition("t", 0, leaderEpoch, log);
        p.becomeFollower(1, leaderEpoch);
        return p;
    }

    /** A leader partition over {@code log} at {@code leaderEpoch}. */
    static Partition leader(UnifiedLog log, int leaderEpoch) {
        Partition p = new Partition("t", 0, leaderEpoch, log);
        p.becomeLeader(leaderEpoch);
        return p;
    }

    /** Appends one batch of {@code records} records ("tag-i" values) as leader at {@code epoch}. */
    static void append(UnifiedLog log, int epoch, int records, String tag) throws IOException {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
            for (int i = 0; i < records; i++) {
                b.append(1_000 + i, null, (tag + "-" + i).getBytes(StandardCharsets.UTF_8));
            }
            b.close();
            log.appendAsLeader(out, epoch);
        } finally {
            out.release();
        }
    }

    /** The leader's batches from {@code fetchOffset} as a fetch would carry them (deltas from fetchOffset). */
    static ByteBuf read(UnifiedLog log, long fetchOffset) throws IOException {
        ByteBuf out = Unpooled.buffer();
        log.readInto(fetchOffset, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
        return out;
    }

    /** Hex of every stored batch from the log start (bytes 0-3 relative to the log start). */
    static String bytes(UnifiedLog log) throws IOException {
        ByteBuf b = read(log, log.logStartOffset());
        try {
            return ByteBufUtil.hexDump(b);
        } finally {
            b.release();
        }
    }

    static void assertSameBytes(UnifiedLog follower, UnifiedLog leader) throws IOException {
        assertThat(follower.logEndOffset()).isEqualTo(leader.logEndOffset());
        assertThat(bytes(follower)).isEqualTo(bytes(leader));
    }

    static PartitionImage image(int leader, int leaderEpoch) {
        return new PartitionImage(0, java.util.List.of(1, 2), leader, leaderEpoch, java.util.List.of(1, 2), 0);
    }
}
