package io.stellflow.tools;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * Exit status, stdout and stderr of one in-process run of a tool's command line: the tools' tests'
 * way to run a command and read what it printed.
 *
 * @param exit the exit status picocli returned
 * @param out everything written to the command line's out writer
 * @param err everything written to the command line's err writer
 */
record ToolRun(int exit, String out, String err) {

    /**
     * Runs {@code commandLine} (as built by the tool's {@code main}, e.g. {@link Tools#commandLine} or
     * a plain {@link CommandLine}) on {@code args}, its out/err captured.
     */
    static ToolRun run(CommandLine commandLine, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = commandLine
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new ToolRun(exit, out.toString(), err.toString());
    }
}
