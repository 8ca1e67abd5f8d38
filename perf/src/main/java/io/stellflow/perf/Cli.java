package io.stellflow.perf;

import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowVersion;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;

/**
 * The load generator's picocli setup and client properties, as the tools module's {@code Tools} and
 * {@code ClientProps} do it: perf and tools are both leaves of the module graph (neither may depend
 * on the other, the layering test checks it), so the lab keeps its own two small helpers.
 *
 * <p>Thread-safety: stateless.
 */
public final class Cli {
    private Cli() {}

    /**
     * A command line on which client errors print one line to stderr and exit with status 1, and
     * usage errors (bad or missing options, semantic checks) print {@code error: <reason>} and {@code
     * Run with --help for usage.} and exit with status 2.
     */
    static CommandLine commandLine(Object command) {
        CommandLine cl = new CommandLine(command);
        withVersion(cl);
        cl.setParameterExceptionHandler((ex, args) -> {
            // One reason and one hint, as the tools' OneLineUsageErrors, not the whole usage text.
            String reason = ex.getMessage();
            if (reason != null && reason.startsWith("Error: ")) {
                reason = reason.substring("Error: ".length()); // picocli's own prefix (argument groups)
            }
            ex.getCommandLine().getErr().println("error: " + reason);
            ex.getCommandLine().getErr().println("Run with --help for usage.");
            ex.getCommandLine().getErr().flush();
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof StellflowException || ex instanceof IllegalArgumentException) {
                commandLine.getErr().println("error: " + ex.getMessage());
                return 1;
            }
            throw ex;
        });
        return cl;
    }

    /**
     * The perf producer's {@code max.block.ms} unless given, as the console producer's: a missing
     * topic or an unreachable broker is reported after 5 s, not the library's 60 s.
     */
    static final String TOOL_MAX_BLOCK_MS = "5000";

    /** Producer {@link Properties}: {@link #clientProps} with the tools' {@code max.block.ms} default. */
    static Properties producerProps(String bootstrap, Map<String, String> overrides) {
        Properties p = clientProps(bootstrap, overrides);
        if (p.getProperty("transactional.id") != null) {
            // A transactional producer may send only inside beginTransaction/commitTransaction.
            throw new IllegalArgumentException("transactional.id=" + p.getProperty("transactional.id")
                    + " is not supported by the perf tool's producer (it sends no transactions); remove the key");
        }
        if (p.getProperty("max.block.ms") == null) {
            p.setProperty("max.block.ms", TOOL_MAX_BLOCK_MS);
        }
        return p;
    }

    /** Client {@link Properties}: {@code bootstrap.servers} plus {@code k=v} overrides (may be null). */
    static Properties clientProps(String bootstrap, Map<String, String> overrides) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        if (overrides != null) {
            overrides.forEach(p::setProperty);
        }
        return p;
    }

    /** Gives {@code cl} and its subcommands {@link VersionProvider} for {@code --version}. */
    public static CommandLine withVersion(CommandLine cl) {
        cl.getCommandSpec().versionProvider(new VersionProvider());
        cl.getSubcommands().values().forEach(Cli::withVersion);
        return cl;
    }

    /** {@code --version}: the Stellflow release the lab was built as ({@link StellflowVersion}). */
    public static final class VersionProvider implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"Stellflow " + StellflowVersion.version()};
        }
    }
}
