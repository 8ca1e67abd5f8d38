package io.stellflow.tools;

import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowVersion;
import picocli.CommandLine;

/**
 * Shared picocli setup: client errors print one line to stderr and exit with status 1; usage errors
 * print {@code error: <reason>} and one hint line and exit with status 2 ({@link OneLineUsageErrors}).
 */
final class Tools {
    private Tools() {}

    static CommandLine commandLine(Object command) {
        CommandLine cl = new CommandLine(command);
        withVersion(cl);
        OneLineUsageErrors.install(cl);
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof StellflowException || ex instanceof IllegalArgumentException) {
                commandLine.getErr().println("error: " + ex.getMessage());
                return 1;
            }
            throw ex;
        });
        return cl;
    }

    /** Gives {@code cl} and its subcommands {@link VersionProvider} for {@code --version}. */
    static CommandLine withVersion(CommandLine cl) {
        cl.getCommandSpec().versionProvider(new VersionProvider());
        cl.getSubcommands().values().forEach(Tools::withVersion);
        return cl;
    }

    /** {@code --version}: the Stellflow release the tools were built as ({@link StellflowVersion}). */
    public static final class VersionProvider implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"Stellflow " + StellflowVersion.version()};
        }
    }
}
