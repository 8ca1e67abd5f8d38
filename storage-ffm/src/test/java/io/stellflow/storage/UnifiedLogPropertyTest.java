package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.TempDirs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Random appends, rolls, clean and crash restarts and torn tails against an in-memory model. */
@IntegrationTest
class UnifiedLogPropertyTest {

    /**
     * Ops: 0-6 append a batch of op+1 records, 7 clean restart, 8 crash restart, 9 crash with half a
     * batch torn at the tail (never acknowledged, so the model does not change), 10 truncate to a
     * point derived from the model (on a batch boundary, or one past it: the whole batch goes).
     */
    @Property(tries = 40)
    void logMatchesModel(
            @ForAll @Size(min = 1, max = 60) List<@IntRange(min = 0, max = 10) Integer> ops,
            @ForAll @IntRange(min = 0, max = 600) int indexIntervalBytes,
            @ForAll @IntRange(min = 1024, max = 4096) int segmentBytes)
            throws IOException {
        LogConfig config = new LogConfig(segmentBytes, indexIntervalBytes, 64, Long.MAX_VALUE, Long.MAX_VALUE);
        Path dir = TempDirs.create("sf-prop");
        List<String> model = new ArrayList<>();
        List<Integer> batchStarts = new ArrayList<>();
        UnifiedLog log = UnifiedLog.open(dir, config);
        try {
            for (int op : ops) {
                if (op <= 6) {
                    List<String> values = new ArrayList<>();
                    for (int i = 0; i <= op; i++) {
                        values.add("m" + model.size() + "-" + "x".repeat((model.size() * 7) % 50));
                    }
                    ByteBuf b = Unpooled.buffer();
                    TestBatches.appendValues(b, values);
                    try {
                        assertThat(log.appendAsLeader(b, op)).isEqualTo(model.size());
                    } finally {
                        b.release();
                    }
                    batchStarts.add(model.size());
                    model.addAll(values);
                } else if (op == 10) {
                    if (!batchStarts.isEmpty()) {
                        int batch = (model.size() * 31 + batchStarts.size()) % batchStarts.size();
                        int boundary = batchStarts.get(batch);
                        int batchEnd = batch + 1 < batchStarts.size() ? batchStarts.get(batch + 1) : model.size();
                        boolean inside = model.size() % 2 == 0 && batchEnd - boundary > 1;
                        long target = inside ? boundary + 1 : boundary;
                        assertThat(log.truncateTo(target)).isEqualTo(boundary);
                        model.subList(boundary, model.size()).clear();
                        batchStarts.subList(batch, batchStarts.size()).clear();
                    }
                } else if (op == 7) {
                    log.close();
                    log = UnifiedLog.open(dir, config);
                } else {
                    log.crashForTesting();
                    if (op == 9) {
                        tearTail(dir);
                    }
                    log = UnifiedLog.open(dir, config);
                }
                assertThat(log.logEndOffset()).isEqualTo(model.size());
            }
            assertReadsMatch(log, model);
        } finally {
            log.close();
            TempDirs.deleteRecursively(dir);
        }
    }

    private static void assertReadsMatch(UnifiedLog log, List<String> model) throws IOException {
        for (long from = 0; from < model.size(); from += 1 + from / 3) {
            ByteBuf out = Unpooled.buffer();
            try {
                log.readInto(from, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
                List<String> got = TestBatches.values(TestBatches.decode(out, from));
                List<Long> offsets = TestBatches.offsets(TestBatches.decode(out, from));
                long first = offsets.get(0);
                assertThat(first).isLessThanOrEqualTo(from);
                assertThat(got).isEqualTo(model.subList((int) first, model.size()));
            } finally {
                out.release();
            }
        }
    }

    private static void tearTail(Path dir) throws IOException {
        Path last;
        try (Stream<Path> files = Files.list(dir)) {
            last = files.filter(p -> p.toString().endsWith(".log"))
                    .max(Comparator.naturalOrder())
                    .orElseThrow();
        }
        ByteBuf b = TestBatches.batch(1, 2, 3);
        try {
            UnifiedLogTest.appendRaw(last, b.nioBuffer(0, b.readableBytes() / 2));
        } finally {
            b.release();
        }
    }
}
