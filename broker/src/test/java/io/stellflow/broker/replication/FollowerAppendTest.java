package io.stellflow.broker.replication;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.TimestampOffset;
import io.stellflow.storage.UnifiedLog;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Applying fetched batches on a follower: batches ending below the log end are skipped (a fetch may
 * start inside a batch), the rest appended with the leader's offsets and epochs, the HW set from the
 * leader's but never above the log end; a damaged batch or a gap appends nothing.
 */
class FollowerAppendTest {
    @TempDir
    Path dir;

    @Test
    void batchesBelowTheLogEndAreSkippedAndTheRestAppendedAsStored() throws Exception {
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(l, 2, 3, "a"); // [0-2]
            ReplicaLogs.append(l, 2, 3, "b"); // [3-5]
            ReplicaLogs.append(l, 4, 2, "c"); // [6-7]
            ReplicaLogs.append(f, 2, 3, "a");
            Partition follower = ReplicaLogs.follower(f, 4);
            ByteBuf all = ReplicaLogs.read(l, 0); // every batch, deltas from 0: the follower holds the first
            try {
                assertThat(FollowerAppend.apply(follower, all, 0, 6)).isEqualTo(FollowerAppend.APPLIED);
            } finally {
                all.release();
            }
            ReplicaLogs.assertSameBytes(f, l);
            assertThat(f.latestLeaderEpoch()).isEqualTo(4);
            assertThat(f.endOffsetForEpoch(2).endOffset()).isEqualTo(6);
            assertThat(follower.highWatermark()).isEqualTo(6);

            // Nothing new: the HW still follows the leader's, capped at the log end.
            assertThat(FollowerAppend.apply(follower, null, -1, 100)).isEqualTo(FollowerAppend.APPLIED);
            assertThat(follower.highWatermark()).isEqualTo(8);
        }
    }

    @Test
    void aBatchWithABadCrcAppendsNothing() throws Exception {
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(l, 1, 2, "a");
            ReplicaLogs.append(l, 1, 2, "b");
            Partition follower = ReplicaLogs.follower(f, 1);
            ByteBuf records = ReplicaLogs.read(l, 0);
            try {
                int second = RecordBatchLayout.batchSize(records, 0);
                int last = records.writerIndex() - 1;
                records.setByte(last, records.getByte(last) ^ 1); // a value byte of the second batch
                assertThat(second).isLessThan(last);
                assertThat(FollowerAppend.apply(follower, records, 0, 4)).isEqualTo(FollowerAppend.CORRUPT);
                assertThat(f.logEndOffset()).isZero();
                assertThat(FollowerAppend.apply(follower, records.slice(0, second + 20), 0, 4))
                        .as("a truncated batch")
                        .isEqualTo(FollowerAppend.CORRUPT);
                assertThat(f.logEndOffset()).isZero();
            } finally {
                records.release();
            }
        }
    }

    @Test
    void batchesThatDoNotContinueTheLogEndAreRefused() throws Exception {
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(l, 1, 2, "a");
            ReplicaLogs.append(l, 1, 2, "b");
            Partition follower = ReplicaLogs.follower(f, 1);
            ByteBuf fromTwo = ReplicaLogs.read(l, 2); // starts at offset 2, the follower is at 0
            try {
                assertThat(FollowerAppend.apply(follower, fromTwo, 2, 4)).isEqualTo(FollowerAppend.OFFSET_MISMATCH);
                assertThat(f.logEndOffset()).isZero();
                assertThat(follower.highWatermark()).isZero();
            } finally {
                fromTwo.release();
            }
        }
    }
    /**
     * Decision 9.s: a fetched SDK batch's header says maxTimestamp = baseTimestamp, its records reach
     * base + 5000 ms; the follower indexes the records' real maximum, so a time lookup on it finds
     * the record inside the batch, as on the leader.
     */
    @Test
    void theFollowerIndexesTheRecordsRealMaxTimestampNotTheHeaders() throws Exception {
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            for (int i = 0; i < 3; i++) {
                ByteBuf sdk = Unpooled.buffer();
                long base = 1_000_000L + 10_000L * i;
                RecordBatchBuilder b = new RecordBatchBuilder(sdk, base);
                for (int r = 0; r < 6; r++) {
                    b.append(base + 1_000L * r, null, new byte[] {(byte) r});
                }
                b.close();
                sdk.setLong(RecordBatchLayout.MAX_TIMESTAMP_OFFSET, base);
                sdk.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(sdk, 0));
                l.appendAsLeader(sdk, 1);
                sdk.release();
            }
            Partition follower = ReplicaLogs.follower(f, 1);
            ByteBuf all = ReplicaLogs.read(l, 0);
            try {
                assertThat(FollowerAppend.apply(follower, all, 0, 18)).isEqualTo(FollowerAppend.APPLIED);
            } finally {
                all.release();
            }
            ReplicaLogs.assertSameBytes(f, l);
            TimestampOffset inLastBatch = new TimestampOffset(1_025_000L, 17);
            assertThat(f.offsetForTimestamp(1_024_500L, Long.MAX_VALUE)).isEqualTo(inLastBatch);
            assertThat(l.offsetForTimestamp(1_024_500L, Long.MAX_VALUE)).isEqualTo(inLastBatch);
            assertThat(f.offsetForTimestamp(1_003_001L, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(1_004_000L, 4));
            assertThat(f.offsetOfMaxTimestamp(Long.MAX_VALUE)).isEqualTo(inLastBatch);
        }
    }

    /** Decision 9.o: the follower stores a compressed batch exactly as the leader does, never decompressing it. */
    @Test
    void compressedBatchesAreStoredAsTheLeaderStoredThem() throws Exception {
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            int epoch = 3;
            for (CompressionType type : CompressionType.values()) {
                ByteBuf plain = Unpooled.buffer();
                long ts = 1_000 + type.id() * 100L; // each codec's batch 100 ms after the previous one
                RecordBatchBuilder b = new RecordBatchBuilder(plain, ts);
                for (int i = 0; i < 20; i++) {
                    b.append(ts + i, ("k" + i).getBytes(UTF_8), ("value " + type + " " + i).getBytes(UTF_8));
                }
                b.close();
                ByteBuf batch = plain;
                if (type != CompressionType.NONE) {
                    batch = Unpooled.buffer();
                    try (CompressionCodec codec = CompressionCodecs.codec(type)) {
                        BatchCompression.compress(plain, 0, codec, batch);
                    }
                    plain.release();
                }
                l.appendAsLeader(batch, epoch);
                batch.release();
            }
            Partition follower = ReplicaLogs.follower(f, epoch);
            ByteBuf all = ReplicaLogs.read(l, 0);
            try {
                assertThat(FollowerAppend.apply(follower, all, 0, 100)).isEqualTo(FollowerAppend.APPLIED);
            } finally {
                all.release();
            }
            ReplicaLogs.assertSameBytes(f, l);
            assertThat(f.logEndOffset()).isEqualTo(100);
            ByteBuf stored = ReplicaLogs.read(f, 0);
            try {
                int p = 0;
                for (CompressionType type : CompressionType.values()) {
                    assertThat(RecordBatchLayout.attributes(stored, p) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                            .isEqualTo(type.id());
                    p += RecordBatchLayout.batchSize(stored, p);
                }
            } finally {
                stored.release();
            }
            // A time lookup on the follower finds the record inside its compressed batch (zstd: offsets 80-99).
            assertThat(f.offsetForTimestamp(1_405, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(1_405, 85));
        }
    }
}
