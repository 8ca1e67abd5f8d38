package io.stellflow.tools;

import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.proto.ErrorCode;
import java.io.PrintWriter;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * The options of every control-plane tool ({@code --bootstrap-controller}, alias {@code
 * --bootstrap-server}, and {@code --timeout-ms}), used as a picocli {@code @Mixin}, and the one way
 * those tools talk to the active controller: {@link #run} opens a {@link ControllerClient}, runs one
 * exchange and turns "no controller answered" into {@code error: ...} on stderr and exit status 1.
 *
 * <p>Thread-safety: confined to the command's thread (picocli fills the fields, then calls the
 * command).
 */
final class ControllerOptions {
    @Option(
            names = {"--bootstrap-controller", "--bootstrap-server"},
            required = true,
            description = "Control-plane host:port list of the controllers (controller.quorum.bootstrap.servers)")
    String bootstrap;

    @Option(names = "--timeout-ms", defaultValue = "15000", description = "Give up after this long (default 15000)")
    long timeoutMs;

    /** One exchange with the active controller; returns the command's exit status. */
    @FunctionalInterface
    interface Exchange {
        int run(ControllerClient client, PrintWriter out, PrintWriter err);
    }

    /**
     * Opens a client on {@link #bootstrap} with a request timeout of {@link #timeoutMs}, runs {@code
     * exchange} with the command line's out/err writers and closes the client.
     *
     * @return the exchange's exit status, or 1 (after {@code error: <why>} on stderr) when no active
     *     controller answered within the timeout
     */
    int run(CommandSpec spec, Exchange exchange) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (ControllerClient c = ControllerClient.builder(bootstrap)
                .requestTimeout(Duration.ofMillis(timeoutMs))
                .build()) {
            return exchange.run(c, out, err);
        } catch (ControllerUnavailableException e) {
            err.println("error: " + e.getMessage());
            return 1;
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
