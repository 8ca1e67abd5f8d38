package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link FetchExpander}: which answers it takes (compressed ones, at most {@link
 * FetchExpander#MAX_BUFFERS} ahead), that an expanded answer decodes to the records of the answer
 * as sent, that it gives up (null, the caller decodes) instead of failing on a damaged answer, and
 * that every reference it takes on an answer's records is given back, also when the answer is
 * released before its expansion ran and when it closes.
 */
class FetchExpanderTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);
    private final List<ByteBuf> answers = new ArrayList<>();
    private FetchExpander expander = new FetchExpander("test", true, new RecordBatchDecompressor(1 << 20));

    @AfterEach
    void closeAndCheckNothingIsHeld() throws InterruptedException {
        expander.close();
        for (ByteBuf b : answers) {
            awaitRefCnt(b, 1);
            b.release();
        }
    }

    /** An answer's records as received: one batch of {@code records} JSON-like values, compressed or not. */
    private ByteBuf records(int records, CompressionType type) {
        ByteBuf plain = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(plain, 1_700_000_000_000L);
        for (int i = 0; i < records; i++) {
            b.append(
                    1_700_000_000_000L + i,
                    null,
                    ("{\"n\":" + i + ",\"msg\":\"served order " + (i * 7919 % 1000) + " in " + (i % 97) + " ms\"}")
                            .getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        if (type == CompressionType.NONE) {
            answers.add(plain);
            return plain;
        }
        ByteBuf out = Unpooled.directBuffer();
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            BatchCompression.compress(plain, 0, codec, out);
        }
        plain.release();
        answers.add(out);
        return out;
    }

    private static CompletedFetch answer(ByteBuf records) {
        // The consumer's answers hold their own reference on the frame: FetchResult.retaining.
        FetchResult r = FetchResult.retaining(Errors.NONE, 100, 100, List.of(), 0, records);
        return new CompletedFetch(TP, 0, 0, r, null);
    }

    private static List<DecodedRecord> decode(ByteBuf set, boolean checkCrc, RecordBatchDecompressor d) {
        List<DecodedRecord> out = new ArrayList<>();
        RecordBatchReader.decode(set, 0, checkCrc, d, (o, ts, k, v, h) -> out.add(new DecodedRecord(o, ts, k, v, h)));
        return out;
    }

    private static void awaitRefCnt(ByteBuf b, int want) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (b.refCnt() != want && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(b.refCnt()).as("references held on an answer's records").isEqualTo(want);
    }

    @Test
    void anUncompressedAnswerOneWithoutRecordsOrAnLz4OneIsNotTaken() {
        CompletedFetch plain = answer(records(10, CompressionType.NONE));
        assertThat(expander.offer(plain)).isFalse();
        assertThat(plain.expander).isNull();
        CompletedFetch lz4 = answer(records(10, CompressionType.LZ4));
        assertThat(expander.offer(lz4)).isFalse();
        lz4.release();
        assertThat(expander.offer(new CompletedFetch(TP, 0, 0, null, new RuntimeException("cut"))))
                .isFalse();
        plain.release();
    }

    @Test
    void aCompressedAnswerExpandsToTheRecordsItHolds() throws InterruptedException {
        for (CompressionType type : FetchExpander.AHEAD) {
            ByteBuf sent = records(300, type);
            CompletedFetch f = answer(sent);
            assertThat(expander.offer(f)).isTrue();
            ByteBuf expanded = expander.await(f);
            assertThat(expanded).isNotNull();
            assertThat(RecordBatchDecompressor.firstBatchCodec(expanded)).isEqualTo(CompressionType.NONE);
            try (RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
                assertThat(decode(expanded, false, null))
                        .usingRecursiveFieldByFieldElementComparator()
                        .isEqualTo(decode(sent, true, d))
                        .hasSize(300);
            }
            awaitRefCnt(sent, 2); // the expander's reference is given back; the answer's is held
            f.release();
            assertThat(f.expanded).isNull();
            assertThat(sent.refCnt()).isEqualTo(1);
        }
    }

    @Test
    void atMostMaxBuffersAnswersAreAheadAndAReleasedOneMakesRoom() throws InterruptedException {
        List<CompletedFetch> taken = new ArrayList<>();
        for (int i = 0; i < FetchExpander.MAX_BUFFERS; i++) {
            CompletedFetch f = answer(records(100, CompressionType.ZSTD));
            assertThat(expander.offer(f)).isTrue();
            taken.add(f);
        }
        CompletedFetch extra = answer(records(100, CompressionType.ZSTD));
        assertThat(expander.offer(extra)).as("one answer more than the bound").isFalse();
        for (CompletedFetch f : taken) {
            assertThat(expander.await(f)).isNotNull();
        }
        assertThat(expander.offer(extra))
                .as("still full: expanded answers hold their buffers")
                .isFalse();
        taken.get(0).release();
        assertThat(expander.offer(extra)).isTrue();
        assertThat(expander.await(extra)).isNotNull();
        extra.release();
        taken.forEach(CompletedFetch::release);
    }

    @Test
    void aDamagedAnswerIsLeftToTheCallerAndItsReferenceGivenBack() throws InterruptedException {
        ByteBuf sent = records(50, CompressionType.ZSTD);
        int last = sent.writerIndex() - 1;
        sent.setByte(last, sent.getByte(last) ^ 0x5a); // the CRC no longer matches
        CompletedFetch f = answer(sent);
        assertThat(expander.offer(f)).isTrue();
        assertThat(expander.await(f)).isNull();
        awaitRefCnt(sent, 2);
        f.release();
        assertThat(sent.refCnt()).isEqualTo(1);
        // A damaged answer frees its slot at once: the bound's worth of answers is taken after it.
        List<CompletedFetch> after = new ArrayList<>();
        for (int i = 0; i < FetchExpander.MAX_BUFFERS; i++) {
            CompletedFetch g = answer(records(10, CompressionType.ZSTD));
            assertThat(expander.offer(g)).isTrue();
            assertThat(expander.await(g)).isNotNull();
            after.add(g);
        }
        after.forEach(CompletedFetch::release);
    }

    @Test
    void answersReleasedBeforeTheirTurnAndAtCloseGiveEveryReferenceBack() throws InterruptedException {
        List<CompletedFetch> taken = new ArrayList<>();
        for (int i = 0; i < FetchExpander.MAX_BUFFERS; i++) {
            CompletedFetch f = answer(records(2_000, CompressionType.GZIP));
            assertThat(expander.offer(f)).isTrue();
            taken.add(f);
        }
        taken.get(2).release(); // likely still queued: cancelled, the expanding thread gives it back
        expander.close();
        taken.get(0).release();
        taken.get(1).release();
        CompletedFetch late = answer(records(10, CompressionType.ZSTD));
        assertThat(expander.offer(late)).as("closed").isFalse();
        late.release();
        // @AfterEach waits for every answer's count to come back to 1.
    }

    @Test
    void anInterruptedAwaitCancelsAQueuedAnswerAndWaitsForARunningOneSoEachBatchIsCountedOnce()
            throws InterruptedException {
        // The expanding thread's listener holds the first answer RUNNING until the latch opens.
        CountDownLatch open = new CountDownLatch(1);
        AtomicInteger heardAhead = new AtomicInteger();
        expander.close();
        expander = new FetchExpander("test", true, new RecordBatchDecompressor(1 << 20, (t, c, d, ns) -> {
            heardAhead.incrementAndGet();
            try {
                open.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        AtomicInteger heardByCaller = new AtomicInteger();
        List<CompletedFetch> taken = new ArrayList<>();
        for (int i = 0; i < FetchExpander.MAX_BUFFERS; i++) {
            CompletedFetch f = answer(records(200, CompressionType.ZSTD));
            assertThat(expander.offer(f)).isTrue();
            taken.add(f);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (heardAhead.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(heardAhead.get()).as("the first answer is expanding").isEqualTo(1);
        try (RecordBatchDecompressor callers =
                new RecordBatchDecompressor(1 << 20, (t, c, d, ns) -> heardByCaller.incrementAndGet())) {
            for (int i = FetchExpander.MAX_BUFFERS - 1; i >= 1; i--) { // queued behind the first
                Thread.currentThread().interrupt();
                assertThat(expander.await(taken.get(i)))
                        .as("a queued answer is cancelled")
                        .isNull();
                assertThat(Thread.interrupted()).as("the flag is set again").isTrue();
                assertThat(decode(taken.get(i).result.records(), true, callers)).hasSize(200);
            }
            // The latch opens once this thread waits in await (interrupted on entry): the running
            // answer is then certainly waited for, not found done.
            Thread caller = Thread.currentThread();
            Thread opener = new Thread(() -> {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (caller.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                open.countDown();
            });
            try {
                opener.start();
                caller.interrupt();
                ByteBuf expanded = expander.await(taken.get(0));
                assertThat(Thread.interrupted()).as("the flag is set again").isTrue();
                assertThat(expanded).as("a running answer is waited for").isNotNull();
                assertThat(decode(expanded, false, null)).hasSize(200);
                opener.join();
            } finally {
                Thread.interrupted(); // never left set for the tests after this one
            }
        }
        taken.forEach(CompletedFetch::release);
        expander.close();
        assertThat(heardAhead.get())
                .as("batches counted by the expanding thread")
                .isEqualTo(1);
        assertThat(heardByCaller.get()).as("batches counted by the caller").isEqualTo(FetchExpander.MAX_BUFFERS - 1);
    }

    @Test
    void aClosedExpanderThatNeverStartedFreesItsDecompressor() {
        RecordBatchDecompressor decompressor = new RecordBatchDecompressor(1 << 20);
        FetchExpander idle = new FetchExpander("idle", true, decompressor);
        idle.close();
        idle.close();
        assertThatThrownBy(() -> decompressor.expandAll(Unpooled.buffer(0), true, 1, Unpooled.buffer(0)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        CompletedFetch f = answer(records(10, CompressionType.ZSTD));
        assertThat(idle.offer(f)).isFalse();
        assertThat(RecordBatchDecompressor.firstBatchCodec(f.result.records())).isEqualTo(CompressionType.ZSTD);
        f.release();
    }
}
