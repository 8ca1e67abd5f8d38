package io.stellflow.protocol.fuzz;

/**
 * One fuzz target: a function of one input that returns normally unless the input exposes a bug
 * (a "finding": an exception the code under test does not document, a broken invariant, a leaked
 * buffer). Driven by Jazzer ({@code @FuzzTest}, coverage-guided) and by {@link ShortRun} (seeded
 * mutations of the seed corpus, the CI run); see {@code docs/fuzzing.md}.
 *
 * <p>Implementations must be deterministic in the input (the same bytes, the same outcome), so a
 * finding replays from its input file alone.
 */
@FunctionalInterface
public interface FuzzTarget {
    /**
     * Runs the code under test on {@code input}.
     *
     * @throws Exception or {@link AssertionError}: a finding
     */
    void run(byte[] input) throws Exception;
}
