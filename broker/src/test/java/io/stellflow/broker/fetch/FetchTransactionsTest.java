package io.stellflow.broker.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.LogConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fetch over a log with transactions (spec §6.4 rules 2 and 4, decisions 9.d and 9.l): consumers
 * never get control batches, isolationLevel 1 stops at the last stable offset and lists the
 * aborted transactions. The transactional appends go through the Partition API directly (the
 * Produce path is {@code TransactionalProduceTest}).
 */
class FetchTransactionsTest {
    @TempDir
    Path dir;

    private static ByteBuf batch(long pid, int seq, String... values) {
        ByteBuf buf = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(buf, 1000L);
        for (String v : values) {
            b.append(1000L, null, v.getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        if (pid >= 0) {
            RecordBatchLayout.setProducerFields(buf, 0, pid, (short) 0, seq);
        }
        return buf;
    }

    private static void txn(Partition p, long pid, int seq, String... values) throws IOException {
        ByteBuf b = batch(pid, seq, values);
        try {
            assertThat(p.appendTransactionalAsLeader(b, null, 1)).isNotNegative();
        } finally {
            b.release();
        }
    }

    private static void plain(Partition p, String value) throws IOException {
        ByteBuf b = batch(-1, -1, value);
        try {
            p.appendAsLeader(b);
        } finally {
            b.release();
        }
    }

    /**
     * What a consumer's Fetch v0 (copy mode) answers, with the base offsets an SDK computes, the
     * records bytes, the first batch's bytes (0 with none) and the last offset returned (-1 with none).
     */
    private record Answer(
            FetchResponse.PartitionData data,
            List<Long> baseOffsets,
            List<Boolean> control,
            int recordsBytes,
            int firstBatchBytes,
            long lastOffset) {}

    private static Answer fetch(LocalPartitions registry, long offset, byte isolation) {
        return fetch(registry, offset, isolation, Frames.MAX_FRAME_LENGTH);
    }

    /** {@link #fetch} in a frame that holds {@code recordsBudget} bytes past its envelope. */
    private static Answer fetch(LocalPartitions registry, long offset, byte isolation, long recordsBudget) {
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                1 << 20,
                isolation,
                0,
                List.of(new FetchRequest.FetchTopic(
                        "t", List.of(new FetchRequest.FetchPartition(0, -1, offset, -1L, 1 << 20)))));
        EmbeddedChannel channel = new EmbeddedChannel();
        RequestContext context = new RequestContext(channel, RequestHeader.of(ApiKeys.FETCH, (short) 0, 1, "test"));
        FetchPlan resolved = FetchPlan.resolve(request, registry);
        int envelope = (int) Math.max(resolved.envelopeBytes(), Frames.MAX_FRAME_LENGTH - recordsBudget);
        FetchResult result = new FetchReader(false).read(new FetchPlan(request, resolved.topics(), envelope), context);
        try {
            ByteBuf head = result.frame().head();
            int bodyStart = head.readerIndex() + 4 + ResponseHeader.SIZE;
            FetchResponse.PartitionData d = FetchResponse.read(head.slice(bodyStart, head.writerIndex() - bodyStart))
                    .responses()
                    .get(0)
                    .partitions()
                    .get(0);
            List<Long> bases = new ArrayList<>();
            List<Boolean> control = new ArrayList<>();
            ByteBuf r = d.records();
            long last = -1;
            for (int p = r.readerIndex(); p < r.writerIndex(); p += RecordBatchLayout.batchSize(r, p)) {
                bases.add(offset + RecordBatchLayout.baseOffsetDelta(r, p)); // how both SDKs compute it
                control.add(ControlRecordLayout.isControl(r, p));
                last = bases.getLast() + RecordBatchLayout.lastOffsetDelta(r, p);
            }
            int first = r.isReadable() ? RecordBatchLayout.batchSize(r, r.readerIndex()) : 0;
            return new Answer(d, bases, control, r.readableBytes(), first, last);
        } finally {
            result.release();
            channel.finishAndReleaseAll();
        }
    }

    /**
     * Offsets: producer 1 BEGIN 0, data 1-2, data 3; plain 4; ABORT(1) 5; producer 2 BEGIN 6, data
     * 7 (open); plain 8. HW 9, LSO 6.
     */
    private static Partition fill(LocalPartitions registry, List<Long> lsoSeen) throws IOException {
        registry.create("t", 1);
        Partition p = registry.partition("t", 0);
        lsoSeen.add(p.lastStableOffset());
        txn(p, 1, 0, "a", "b");
        lsoSeen.add(p.lastStableOffset());
        txn(p, 1, 2, "c");
        lsoSeen.add(p.lastStableOffset());
        plain(p, "p");
        lsoSeen.add(p.lastStableOffset());
        assertThat(p.appendTransactionMarker(1, (short) 0, false, 0, 1)).isEqualTo(5);
        lsoSeen.add(p.lastStableOffset());
        txn(p, 2, 0, "x");
        lsoSeen.add(p.lastStableOffset());
        plain(p, "q");
        lsoSeen.add(p.lastStableOffset());
        assertThat(p.highWatermark()).isEqualTo(9);
        return p;
    }

    @Test
    void readCommittedStopsAtTheLastStableOffsetAndListsTheAbortedTransactions() throws IOException {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            List<Long> lso = new ArrayList<>();
            Partition p = fill(registry, lso);
            assertThat(lso).containsExactly(0L, 0L, 0L, 0L, 6L, 6L, 6L);
            Answer a = fetch(registry, 0, FetchRequest.READ_COMMITTED);
            assertThat(a.data().errorCode()).isEqualTo(Errors.NONE);
            assertThat(a.data().highWatermark()).isEqualTo(9);
            assertThat(a.data().lastStableOffset()).isEqualTo(6);
            assertThat(a.baseOffsets()).containsExactly(1L, 3L, 4L);
            assertThat(a.control()).containsOnly(false);
            assertThat(a.data().abortedTransactions()).containsExactly(new FetchResponse.AbortedTransaction(1, 0));
            // From the LSO up to the log end: no records, no error (decision 9.f).
            assertThat(fetch(registry, 6, FetchRequest.READ_COMMITTED).baseOffsets())
                    .isEmpty();
            // The commit moves the LSO to the HW; the aborted transaction is behind this range.
            assertThat(p.appendTransactionMarker(2, (short) 0, true, 0, 1)).isEqualTo(9);
            lso.add(p.lastStableOffset());
            assertThat(lso).isSorted().endsWith(10L);
            Answer after = fetch(registry, 6, FetchRequest.READ_COMMITTED);
            assertThat(after.baseOffsets()).containsExactly(7L, 8L);
            assertThat(after.data().abortedTransactions()).isEmpty();
            assertThat(after.data().lastStableOffset()).isEqualTo(10);
        }
    }

    @Test
    void readUncommittedConsumersNeverSeeControlBatchesAndProgressPastMarkers() throws IOException {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            Partition p = fill(registry, new ArrayList<>());
            Answer a = fetch(registry, 0, FetchRequest.READ_UNCOMMITTED);
            assertThat(a.baseOffsets()).containsExactly(1L, 3L, 4L, 7L, 8L);
            assertThat(a.control()).containsOnly(false);
            assertThat(a.data().lastStableOffset())
                    .as("the real LSO at level 0 too")
                    .isEqualTo(6);
            assertThat(a.data().abortedTransactions()).isEmpty();
            // Exactly at the ABORT marker (5), followed by a BEGIN (6): the data after both comes back.
            Answer atMarker = fetch(registry, 5, FetchRequest.READ_UNCOMMITTED);
            assertThat(atMarker.baseOffsets()).containsExactly(7L, 8L);
            // A marker last in the log: nothing to return yet, no error; the offset stays there.
            assertThat(p.appendTransactionMarker(2, (short) 0, true, 0, 1)).isEqualTo(9);
            Answer atLast = fetch(registry, 9, FetchRequest.READ_UNCOMMITTED);
            assertThat(atLast.data().errorCode()).isEqualTo(Errors.NONE);
            assertThat(atLast.baseOffsets()).isEmpty();
            plain(p, "r");
            assertThat(fetch(registry, 9, FetchRequest.READ_UNCOMMITTED).baseOffsets())
                    .containsExactly(10L);
        }
    }

    @Test
    void v1ConsumersGetTheDataBetweenMarkersAsOneRegion() throws IOException {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            fill(registry, new ArrayList<>());
            for (long[] fromAndRecords : new long[][] {{0, 4}, {5, 2}}) {
                FetchRequest request = new FetchRequest(
                        -1,
                        0,
                        1,
                        1 << 20,
                        FetchRequest.READ_UNCOMMITTED,
                        0,
                        List.of(new FetchRequest.FetchTopic(
                                "t",
                                List.of(new FetchRequest.FetchPartition(0, -1, fromAndRecords[0], -1L, 1 << 20)))));
                EmbeddedChannel channel = new EmbeddedChannel();
                RequestContext context =
                        new RequestContext(channel, RequestHeader.of(ApiKeys.FETCH, (short) 1, 1, "test"));
                FetchResult result =
                        new FetchReader(true).read(FetchPlan.resolve(request, registry, (short) 1), context);
                try {
                    // From 0: BEGIN skipped, data 1-4 kept, the ABORT at 5 ends the contiguous range.
                    // From 5: ABORT and BEGIN skipped, data 7 and 8.
                    assertThat(result.records()).isEqualTo(fromAndRecords[1]);
                    assertThat(result.frame().regionCount()).isEqualTo(1);
                } finally {
                    result.release();
                    channel.finishAndReleaseAll();
                }
            }
        }
    }

    /**
     * A read_committed answer whose records and aborted-transaction list would together pass the
     * frame: the list counts against the frame limit too, so the last batches wait for the next
     * fetch, and the list names exactly the aborted transactions the returned batches overlap. A
     * first batch that cannot fit with its list answers MESSAGE_TOO_LARGE rather than nothing forever.
     */
    @Test
    void readCommittedAbortedListCountsAgainstTheFrameLimit() throws IOException {
        try (LocalPartitions registry = LocalPartitions.open(dir, LogConfig.defaults())) {
            registry.create("t", 1);
            Partition p = registry.partition("t", 0);
            int early = 40;
            int late = 10;
            // 40 transactions open together (a BEGIN and a batch each), then a second batch of each;
            // then 10 more transactions open (a BEGIN and a batch each); then all 50 are aborted.
            // From the first second batch on, the list of every answer names the 40, and those of the
            // 10 whose batch it returns.
            for (int i = 0; i < early; i++) {
                txn(p, 100 + i, 0, "aborted-" + i);
            }
            long from = p.logEndOffset();
            for (int i = 0; i < early; i++) {
                txn(p, 100 + i, 1, "aborted-again-" + i);
            }
            for (int i = 0; i < late; i++) {
                txn(p, 200 + i, 0, "aborted-late-" + i);
            }
            for (int i = 0; i < early; i++) {
                p.appendTransactionMarker(100 + i, (short) 0, false, 0, 1);
            }
            for (int i = 0; i < late; i++) {
                p.appendTransactionMarker(200 + i, (short) 0, false, 0, 1);
            }
            plain(p, "after");
            long end = p.highWatermark();
            // Unlimited: every data batch (50 aborted + 1 plain) and the 50 aborted transactions.
            Answer all = fetch(registry, from, FetchRequest.READ_COMMITTED);
            assertThat(all.baseOffsets()).hasSize(early + late + 1);
            assertThat(all.data().abortedTransactions()).hasSize(early + late);
            // A frame that holds the records but not the list: the list must not overflow it.
            long budget = all.recordsBytes();
            Answer cut = fetch(registry, from, FetchRequest.READ_COMMITTED, budget);
            assertThat(cut.data().errorCode()).isEqualTo(Errors.NONE);
            int listed = cut.data().abortedTransactions().size();
            assertThat(cut.recordsBytes() + 16L * listed)
                    .as("records and aborted list within the frame's records budget")
                    .isLessThanOrEqualTo(budget);
            int returned = cut.baseOffsets().size();
            assertThat(returned).isBetween(early + 1, early + late - 1);
            assertThat(listed)
                    .as("the 40 early transactions and the late ones whose batch is returned, no other")
                    .isEqualTo(early + (returned - early));
            assertThat(cut.lastOffset()).isLessThan(end);
            // The first batch fits the frame alone but not with its list of 40: not an empty answer
            // forever, MESSAGE_TOO_LARGE.
            Answer tooLarge = fetch(registry, from, FetchRequest.READ_COMMITTED, all.firstBatchBytes() + 16L * 10);
            assertThat(tooLarge.data().errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
            assertThat(tooLarge.baseOffsets()).isEmpty();
        }
    }
}
