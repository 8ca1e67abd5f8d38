package io.stellflow.tools;

import picocli.CommandLine;

/**
 * The tools' picocli parameter-exception handler: a bad flag or value, a missing required option or a
 * semantic usage error thrown as {@link CommandLine.ParameterException} from a command (such as
 * {@code --alter needs --partitions}) prints two lines to stderr, {@code error: <what is wrong>} and
 * {@code Run with --help for usage.}, and exits with status 2, instead of the message followed by the
 * whole usage text. {@link Tools#commandLine} installs it on every tool.
 *
 * <p>Thread-safety: stateless.
 */
final class OneLineUsageErrors {
    /** Exit status of a usage error (picocli's own usage status). */
    static final int USAGE_EXIT = 2;

    /** The line after the {@code error:} line. */
    static final String HINT = "Run with --help for usage.";

    private OneLineUsageErrors() {}

    /** {@link Tools#commandLine} for {@code command} (which has one-line usage errors). */
    static CommandLine commandLine(Object command) {
        return Tools.commandLine(command);
    }

    /** Installs the handler on {@code cl} and the subcommands it has now. */
    static CommandLine install(CommandLine cl) {
        cl.setParameterExceptionHandler((ex, args) -> {
            String reason = ex.getMessage();
            // picocli starts some of its own messages (argument groups) with "Error: "
            if (reason != null && reason.startsWith("Error: ")) {
                reason = reason.substring("Error: ".length());
            }
            ex.getCommandLine().getErr().println("error: " + reason);
            ex.getCommandLine().getErr().println(HINT);
            ex.getCommandLine().getErr().flush();
            return USAGE_EXIT;
        });
        return cl;
    }
}
