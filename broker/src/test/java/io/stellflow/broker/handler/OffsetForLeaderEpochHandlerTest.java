package io.stellflow.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest.PartitionEpoch;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse.EpochEndOffset;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader's OffsetForLeaderEpoch answers on a real log with epochs 1 at [0-2] and 3 at [3-4],
 * led at epoch 5 (nothing appended in 4 or 5 yet): end offsets per epoch, the current epoch counted
 * from the log end, fenced and unknown current epochs.
 */
class OffsetForLeaderEpochHandlerTest {
    @TempDir
    Path dir;

    private UnifiedLog log;
    private Partition leader;

    @BeforeEach
    void openLog() throws Exception {
        log = UnifiedLog.open(dir.resolve("t-0"), LogConfig.defaults());
        append(1, 3);
        append(3, 2);
        leader = new Partition("t", 0, 5, log);
        leader.becomeLeader(5);
    }

    @AfterEach
    void closeLog() throws Exception {
        log.close();
    }

    private void append(int epoch, int records) throws Exception {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
            for (int i = 0; i < records; i++) {
                b.append(1_000, null, ("r" + i).getBytes(StandardCharsets.UTF_8));
            }
            b.close();
            log.appendAsLeader(out, epoch);
        } finally {
            out.release();
        }
    }

    private EpochEndOffset ask(int currentLeaderEpoch, int leaderEpoch) {
        return OffsetForLeaderEpochHandler.answer(leader, new PartitionEpoch(0, currentLeaderEpoch, leaderEpoch));
    }

    private static EpochEndOffset ok(int epoch, long endOffset) {
        return new EpochEndOffset(0, Errors.NONE, epoch, endOffset);
    }

    @Test
    void anEpochEndsWhereTheNextHigherEpochStarts() {
        assertThat(ask(5, 1)).isEqualTo(ok(1, 3));
        assertThat(ask(5, 2))
                .as("2 never wrote: its floor 1 ends where 3 starts")
                .isEqualTo(ok(1, 3));
        assertThat(ask(5, 0))
                .as("below the history: ends where the first epoch starts")
                .isEqualTo(ok(0, 0));
    }

    @Test
    void theLatestEpochsAndTheCurrentEpochEndAtTheLogEnd() throws Exception {
        assertThat(ask(5, 3)).isEqualTo(ok(3, 5));
        assertThat(ask(5, 4))
                .as("between the log's latest epoch and the current one")
                .isEqualTo(ok(3, 5));
        assertThat(ask(5, 5)).isEqualTo(ok(5, 5));
        append(5, 2);
        assertThat(ask(5, 4)).isEqualTo(ok(3, 5));
        assertThat(ask(5, 5)).isEqualTo(ok(5, 7));
        assertThat(ask(-1, 3)).as("no epoch check").isEqualTo(ok(3, 5));
    }

    @Test
    void anEpochAboveTheCurrentOneIsUndefined() {
        assertThat(ask(5, 6)).isEqualTo(EpochEndOffset.error(0, Errors.NONE));
        assertThat(ask(5, -1)).isEqualTo(EpochEndOffset.error(0, Errors.NONE));
    }

    @Test
    void anOlderCurrentEpochIsFencedAndANewerOneUnknown() {
        assertThat(ask(4, 3)).isEqualTo(EpochEndOffset.error(0, Errors.FENCED_LEADER_EPOCH));
        assertThat(ask(6, 3)).isEqualTo(EpochEndOffset.error(0, Errors.UNKNOWN_LEADER_EPOCH));
    }

    @Test
    void anEmptyLogAnswersItsLogEndForEpochsUpToTheCurrentOne() throws Exception {
        try (UnifiedLog empty = UnifiedLog.open(dir.resolve("t-1"), LogConfig.defaults())) {
            empty.truncateFullyAndStartAt(42);
            Partition p = new Partition("t", 1, 2, empty);
            p.becomeLeader(2);
            assertThat(OffsetForLeaderEpochHandler.answer(p, new PartitionEpoch(1, 2, 1)))
                    .isEqualTo(new EpochEndOffset(1, Errors.NONE, 1, 42));
            assertThat(OffsetForLeaderEpochHandler.answer(p, new PartitionEpoch(1, 2, 3)))
                    .isEqualTo(EpochEndOffset.error(1, Errors.NONE));
        }
    }
}
