package io.stellflow.tools;

import picocli.CommandLine;

/**
 * A picocli parameter-exception handler for the inspection tools: a bad flag or value prints one
 * line, {@code error: <what is wrong> (see --help)}, to stderr and exits with status 2, instead of
 * the message followed by the whole usage text.
 *
 * <p>Thread-safety: stateless.
 */
final class OneLineUsageErrors {
    /** Exit status of a usage error (picocli's own usage status). */
    static final int USAGE_EXIT = 2;

    private OneLineUsageErrors() {}

    /** {@link Tools#commandLine} for {@code command}, with one-line usage errors. */
    static CommandLine commandLine(Object command) {
        CommandLine cl = Tools.commandLine(command);
        cl.setParameterExceptionHandler((ex, args) -> {
            ex.getCommandLine().getErr().println("error: " + ex.getMessage() + " (see --help)");
            ex.getCommandLine().getErr().flush();
            return USAGE_EXIT;
        });
        return cl;
    }
}
