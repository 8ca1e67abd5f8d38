package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.message.FetchResponse.AbortedTransaction;
import io.stellflow.protocol.record.RecordBatchReader.BatchGate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Seeded simulation of {@link AbortedTransactionFilter} against the broker's rules: a random log of
 * interleaved transactions (BEGIN, data, COMMIT, ABORT), plain batches and compaction holes; Fetch
 * answers built as the broker builds them (markers left out; v1: one contiguous run that ends at a
 * marker after kept batches; v0: data batches across markers; a batch-count limit; the aborted
 * transactions overlapping the returned range); a consumer loop that fetches from where the filter
 * says. Checked per seed: every committed or plain batch below the LSO is delivered once, in order,
 * no aborted one is, and each answer moves the fetch offset forward.
 */
class AbortedTransactionFilterSimulationTest {
    private static final int DATA = 0;
    private static final int BEGIN = 1;
    private static final int COMMIT = 2;
    private static final int ABORT = 3;

    /** A stored batch: [base, last], its producer (-1 plain) and kind. */
    private record Batch(long base, long last, long pid, int kind) {}

    /** A closed aborted transaction: BEGIN at first, ABORT at marker. */
    private record Aborted(long pid, long first, long marker) {}

    @Test
    void deliversExactlyTheCommittedAndPlainBatchesForManySeeds() {
        long seed0 = Long.getLong("stellflow.sim.seed", System.nanoTime());
        System.out.println("AbortedTransactionFilterSimulationTest seeds " + seed0 + ".." + (seed0 + 499)
                + " (-Dstellflow.sim.seed=N repeats a run)");
        for (int i = 0; i < 500; i++) {
            run(seed0 + i);
        }
    }

    private static void run(long seed) {
        Random rnd = new Random(seed);
        List<Batch> log = new ArrayList<>();
        List<Aborted> aborts = new ArrayList<>();
        Map<Long, Long> openFirst = new HashMap<>();
        Map<Long, List<Batch>> openData = new HashMap<>();
        List<Batch> abortedData = new ArrayList<>();
        long next = 0;
        int steps = 20 + rnd.nextInt(80);
        for (int step = 0; step < steps; step++) {
            int roll = rnd.nextInt(10);
            if (roll == 0) {
                next += 1 + rnd.nextInt(2); // a batch removed by compaction
                continue;
            }
            if (roll == 1) {
                long last = next + rnd.nextInt(3);
                log.add(new Batch(next, last, -1, DATA));
                next = last + 1;
                continue;
            }
            long pid = 100 + rnd.nextInt(4);
            Long first = openFirst.get(pid);
            if (first == null) {
                openFirst.put(pid, next);
                openData.put(pid, new ArrayList<>());
                log.add(new Batch(next, next, pid, BEGIN));
                next++;
            } else if (rnd.nextInt(4) == 0) {
                boolean commit = rnd.nextBoolean();
                log.add(new Batch(next, next, pid, commit ? COMMIT : ABORT));
                if (!commit) {
                    aborts.add(new Aborted(pid, first, next));
                    abortedData.addAll(openData.get(pid));
                }
                openFirst.remove(pid);
                openData.remove(pid);
                next++;
                continue;
            }
            long last = next + rnd.nextInt(3);
            Batch b = new Batch(next, last, pid, DATA);
            log.add(b);
            openData.get(pid).add(b);
            next = last + 1;
        }
        long lso = openFirst.values().stream().mapToLong(Long::longValue).min().orElse(next);
        long start = rnd.nextInt(3) == 0 && lso > 0 ? rnd.nextInt((int) lso) : 0;
        boolean v1 = rnd.nextBoolean();
        int maxBatches = 1 + rnd.nextInt(6);

        List<Long> expected = new ArrayList<>();
        for (Batch b : log) {
            if (b.kind() == DATA && b.last() < lso && b.last() >= start && !abortedData.contains(b)) {
                expected.add(b.base());
            }
        }

        AbortedTransactionFilter filter = new AbortedTransactionFilter();
        List<Long> delivered = new ArrayList<>();
        long fetch = start;
        for (int round = 0; fetch < lso; round++) {
            assertThat(round).as("seed %d: too many fetches", seed).isLessThan(10_000);
            List<Batch> answer = answer(log, fetch, lso, v1, maxBatches);
            if (answer.isEmpty()) {
                fetch = lso; // G4: only markers (or nothing) up to the bound
                continue;
            }
            long upper = answer.get(answer.size() - 1).last() + 1;
            List<AbortedTransaction> listed = new ArrayList<>();
            for (Aborted a : aborts) {
                if (a.marker() >= fetch && a.first() < upper) {
                    listed.add(new AbortedTransaction(a.pid(), a.first()));
                }
            }
            filter.reset(fetch, listed);
            long nextFetch = upper;
            for (Batch b : answer) {
                int verdict = filter.admit(b.pid(), b.base(), b.last());
                if (verdict == BatchGate.STOP) {
                    nextFetch = b.base();
                    break;
                }
                if (verdict == BatchGate.DELIVER) {
                    delivered.add(b.base());
                }
            }
            assertThat(nextFetch)
                    .as("seed %d: the fetch offset moves forward", seed)
                    .isGreaterThan(fetch);
            fetch = nextFetch;
        }
        assertThat(delivered)
                .as("seed %d (v1 %s, %d batches per answer)", seed, v1, maxBatches)
                .isEqualTo(expected);
    }

    /** The data batches a consumer Fetch at {@code fetch} returns, as the broker selects them. */
    private static List<Batch> answer(List<Batch> log, long fetch, long bound, boolean v1, int maxBatches) {
        List<Batch> out = new ArrayList<>();
        for (Batch b : log) {
            if (b.last() < fetch) {
                continue;
            }
            if (b.last() >= bound || out.size() == maxBatches) {
                break;
            }
            if (b.kind() != DATA) {
                if (v1 && !out.isEmpty()) {
                    break; // single-segment mode: a marker after kept batches ends the run
                }
                continue;
            }
            out.add(b);
        }
        return out;
    }
}
