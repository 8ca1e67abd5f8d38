package io.stellflow.protocol.fuzz;

import io.netty.buffer.ByteBufUtil;
import io.stellflow.testsupport.LeakCheck;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Assumptions;

/**
 * The CI run of a fuzz target: its corpus, then {@code n} seeded mutants of it ({@link Mutator}),
 * then Netty's leak reports. A finding fails the test naming the target, the random seed and the
 * mutant's index, with the input's hex; the input is also written to {@code
 * target/fuzz-findings/<target>/} so it can be copied into the corpus directory as a regression
 * input. Not coverage-guided: that is Jazzer's job in the soak ({@code docs/fuzzing.md}), so under
 * {@code JAZZER_FUZZ} this run is skipped.
 *
 * <p>System properties: {@value #INPUTS_PROPERTY} (mutants per target; the target's CI default
 * otherwise) and {@value #SEED_PROPERTY} (the random seed, default 23).
 */
public final class ShortRun {
    public static final String INPUTS_PROPERTY = "stellflow.fuzz.inputs";
    public static final String SEED_PROPERTY = "stellflow.fuzz.seed";

    private ShortRun() {}

    /**
     * Runs {@code target} over {@code corpus} and {@code defaultInputs} (or {@value
     * #INPUTS_PROPERTY}) mutants of it.
     *
     * @throws AssertionError on a finding or a leak report
     */
    public static void run(String name, FuzzTarget target, List<byte[]> corpus, int defaultInputs) throws Exception {
        String jazzer = System.getenv("JAZZER_FUZZ");
        Assumptions.assumeTrue(
                jazzer == null || jazzer.isEmpty(), "JAZZER_FUZZ is set: Jazzer fuzzes, the short run is skipped");
        int inputs = Integer.getInteger(INPUTS_PROPERTY, defaultInputs);
        long seed = Long.getLong(SEED_PROPERTY, 23L);
        long start = System.nanoTime();
        for (int i = 0; i < corpus.size(); i++) {
            runOne(name, target, corpus.get(i), "corpus file " + i, seed);
        }
        Mutator mutator = new Mutator(seed ^ name.hashCode(), corpus);
        for (int i = 0; i < inputs; i++) {
            runOne(name, target, mutator.next(), "mutant " + i, seed);
        }
        List<String> leaks = LeakCheck.collectReports();
        if (!leaks.isEmpty()) {
            throw new AssertionError("fuzz target " + name + ": Netty LEAK report(s):\n" + String.join("\n", leaks));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(
                Locale.ROOT,
                "fuzz %s: %d corpus inputs + %d mutants (seed %d) in %.2f s, %.0f inputs/s, no finding%n",
                name,
                corpus.size(),
                inputs,
                seed,
                seconds,
                (corpus.size() + inputs) / seconds);
    }

    private static void runOne(String name, FuzzTarget target, byte[] input, String which, long seed)
            throws IOException {
        try {
            target.run(input);
        } catch (Throwable t) {
            Path dir = Path.of("target", "fuzz-findings", name);
            Files.createDirectories(dir);
            Path file = dir.resolve(which.replace(' ', '-') + ".bin");
            Files.write(file, input);
            String hex = ByteBufUtil.hexDump(input, 0, Math.min(input.length, 2048));
            throw new AssertionError(
                    "fuzz target " + name + ": finding on " + which + " (seed " + seed + "), input saved as " + file
                            + " (" + input.length + " bytes): " + hex,
                    t);
        }
    }
}
