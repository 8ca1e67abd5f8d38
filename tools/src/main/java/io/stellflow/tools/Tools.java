package io.stellflow.tools;

import io.stellflow.client.StellflowException;
import picocli.CommandLine;

/** Shared picocli setup: client errors print one line to stderr and exit with status 1. */
final class Tools {
    private Tools() {}

    static CommandLine commandLine(Object command) {
        CommandLine cl = new CommandLine(command);
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof StellflowException || ex instanceof IllegalArgumentException) {
                commandLine.getErr().println("error: " + ex.getMessage());
                return 1;
            }
            throw ex;
        });
        return cl;
    }
}
