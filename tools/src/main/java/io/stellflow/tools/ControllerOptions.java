package io.stellflow.tools;

import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.ErrorCode;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The options of every control-plane tool, used as a picocli {@code @Mixin}: {@code
 * --bootstrap-server} (brokers, through which the tool finds the controllers), {@code
 * --bootstrap-controller} (the controllers' {@code controller.listener} addresses), exactly one of
 * them, and {@code --timeout-ms}; inherited, so a tool with subcommands takes them before or after
 * the subcommand ({@code stellflow-metadata-quorum.sh describe --bootstrap-controller C}). {@link
 * #run} is the one way those tools talk to the active controller: it checks the addresses ({@link
 * ClusterAccess}: a port of the wrong kind is named as such at once), opens a {@link
 * ControllerClient}, runs one exchange and turns "no controller answered" into {@code error: ...}
 * on stderr and exit status 1.
 *
 * <p>Thread-safety: confined to the command's thread (picocli fills the fields, then calls the
 * command).
 */
final class ControllerOptions {
    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            scope = ScopeType.INHERIT,
            description = "host:port list of brokers; the tool reaches the controllers through them")
    String bootstrapServer;

    @Option(
            names = "--bootstrap-controller",
            converter = AddressList.class,
            scope = ScopeType.INHERIT,
            description = "host:port list of the controllers' control planes (controller.listener)")
    String bootstrapController;

    @Option(
            names = "--timeout-ms",
            defaultValue = "15000",
            scope = ScopeType.INHERIT,
            description = "Give up after this long (default 15000)")
    long timeoutMs;

    /** One exchange with the active controller; returns the command's exit status. */
    @FunctionalInterface
    interface Exchange {
        int run(ControllerClient client, PrintWriter out, PrintWriter err);
    }

    /**
     * Checks the bootstrap addresses, opens a client of the controllers with a request timeout of
     * {@link #timeoutMs}, runs {@code exchange} with the command line's out/err writers and closes the
     * client.
     *
     * @return the exchange's exit status, or 1 (after {@code error: <why>} on stderr) when an address
     *     is of the wrong kind or unreachable, or no active controller answered within the timeout
     * @throws CommandLine.ParameterException (exit status 2) unless exactly one of the two bootstrap
     *     options is given
     */
    int run(CommandSpec spec, Exchange exchange) {
        return runWithAccess(spec, (access, out, err) -> exchange.run(access.controllers(), out, err));
    }

    /** An exchange that may also ask the brokers ({@link ClusterAccess#brokers}). */
    @FunctionalInterface
    interface ClusterExchange {
        int run(ClusterAccess access, PrintWriter out, PrintWriter err);
    }

    /** {@link #run}, with the whole {@link ClusterAccess} (controllers and brokers). */
    int runWithAccess(CommandSpec spec, ClusterExchange exchange) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        checkOneBootstrap(spec, bootstrapServer, bootstrapController);
        try (ClusterAccess access = ClusterAccess.open(bootstrapServer, bootstrapController, timeoutMs, null)) {
            return exchange.run(access, out, err);
        } catch (ControllerUnavailableException | ClusterAccess.BootstrapException e) {
            err.println("error: " + e.getMessage());
            return 1;
        }
    }

    /**
     * Fails the command line unless exactly one of {@code --bootstrap-server} and {@code
     * --bootstrap-controller} was given.
     */
    static void checkOneBootstrap(CommandSpec spec, String bootstrapServer, String bootstrapController) {
        if ((bootstrapServer == null) == (bootstrapController == null)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "give exactly one of --bootstrap-server (brokers) and --bootstrap-controller (controllers)");
        }
    }

    /**
     * Reports a controller's refusal: {@code error: <CODE> <message>} on stderr.
     *
     * @return 1, the exit status of a refused request
     */
    static int refused(PrintWriter err, ErrorCode code, String message) {
        err.println("error: " + code + " " + message);
        return 1;
    }
}
