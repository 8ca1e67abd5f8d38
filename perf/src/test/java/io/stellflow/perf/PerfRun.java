package io.stellflow.perf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * Exit status, stdout and stderr of one in-process run of {@code bin/stellflow-perf.sh} (the
 * command line {@link Cli#commandLine} builds for {@link PerfCommand}): the perf tests' runner.
 *
 * @param exit the exit status (0 done, 2 bad arguments)
 * @param out everything written to stdout (the JSON result with {@code --json})
 * @param err everything written to stderr
 */
record PerfRun(int exit, String out, String err) {

    /** Runs the perf command line on {@code args}, its out/err captured. */
    static PerfRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Cli.commandLine(new PerfCommand())
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new PerfRun(exit, out.toString(), err.toString());
    }

    /** The JSON result of a {@code --json} run; fails the test (showing stderr) unless the run succeeded. */
    JsonNode json() throws IOException {
        assertThat(exit).as(err).isZero();
        return new ObjectMapper().readTree(out.strip());
    }
}
