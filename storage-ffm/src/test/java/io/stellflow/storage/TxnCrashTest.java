package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.testsupport.IntegrationTest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM ({@link TxnCrashChild}) running interleaved transactions with SIGKILL at random
 * moments; after each kill the recovered log's aborted-transaction index and open transactions must
 * equal what a full replay of the same log computes without any snapshot or {@code .txnindex}.
 * Reproduce a run with {@code -Dsf.crash.seed=<seed>} (the seed is printed).
 */
@IntegrationTest
class TxnCrashTest {
    @TempDir
    Path dir;

    private static final int ROUNDS = 8;

    @Test
    void afterEveryKillTheAbortedIndexAndOpenTransactionsEqualAFullRebuild() throws Exception {
        long seed = Long.getLong("sf.crash.seed", System.nanoTime());
        System.out.println("TxnCrashTest seed=" + seed + " (rerun with -Dsf.crash.seed=" + seed + ")");
        Random random = new Random(seed);
        String java = ProcessHandle.current().info().command().orElseThrow();
        String classpath = System.getProperty("java.class.path");
        Path logDir = dir.resolve("p-0");
        int abortsSeen = 0;
        for (int round = 0; round < ROUNDS; round++) {
            Process child = new ProcessBuilder(
                            java,
                            "-cp",
                            classpath,
                            TxnCrashChild.class.getName(),
                            logDir.toString(),
                            "" + random.nextLong())
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            CountDownLatch opened = new CountDownLatch(1);
            Thread reader = Thread.ofPlatform().start(() -> awaitOpened(child, opened));
            try {
                assertThat(opened.await(30, TimeUnit.SECONDS))
                        .as("round %d: child opened", round)
                        .isTrue();
                Thread.sleep(100 + random.nextInt(400));
            } finally {
                child.destroyForcibly(); // SIGKILL
                child.waitFor(30, TimeUnit.SECONDS);
                reader.join(30_000);
            }
            List<AbortedTxn> aborted;
            long firstUnstable;
            long[] open = new long[4];
            try (UnifiedLog log = UnifiedLog.open(logDir, TxnCrashChild.CONFIG)) {
                aborted = log.abortedTransactions(0, Long.MAX_VALUE);
                firstUnstable = log.firstUnstableOffset();
                for (int pid = 1; pid <= 3; pid++) {
                    open[pid] = log.producerState().openTransactionFirstOffset(pid);
                }
            }
            Path rebuilt = dir.resolve("rebuilt-" + round);
            copyWithoutProducerFiles(logDir, rebuilt);
            try (UnifiedLog log = UnifiedLog.open(rebuilt, TxnCrashChild.CONFIG)) {
                assertThat(log.producerStateReplayedFrom()).isEqualTo(log.logStartOffset());
                assertThat(aborted)
                        .as("round %d: aborted", round)
                        .isEqualTo(log.abortedTransactions(0, Long.MAX_VALUE));
                assertThat(firstUnstable).as("round %d", round).isEqualTo(log.firstUnstableOffset());
                for (int pid = 1; pid <= 3; pid++) {
                    assertThat(open[pid]).isEqualTo(log.producerState().openTransactionFirstOffset(pid));
                }
            }
            abortsSeen = aborted.size();
        }
        System.out.println("TxnCrashTest: " + ROUNDS + " rounds, " + abortsSeen + " aborted transactions at the end");
        assertThat(abortsSeen).as("the children aborted transactions").isPositive();
    }

    private static void copyWithoutProducerFiles(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (!name.endsWith(ProducerSnapshotLayout.SUFFIX) && !name.endsWith(AbortedTxnIndexLayout.SUFFIX)) {
                    Files.copy(f, to.resolve(name));
                }
            }
        }
    }

    private static void awaitOpened(Process child, CountDownLatch opened) {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("OPENED ")) {
                    opened.countDown();
                }
            }
        } catch (IOException e) {
            // the pipe breaks when the child dies
        }
    }
}
