package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code stellflow-transactions.sh}'s flags: every bad, missing or conflicting flag exits 2 with one
 * {@code error:} line naming it and the hint, before any connection (the bootstrap address is a
 * port nobody listens on and is never dialled: a connection attempt would exit 1 instead).
 */
class TransactionsCommandOptionsTest {
    private static final String NOBODY = "127.0.0.1:1";

    private static ToolRun run(String... args) {
        return ToolRun.run(Tools.commandLine(new TransactionsCommand()), args);
    }

    private static void usageError(String reason, String... args) {
        ToolRun r = run(args);
        assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("error: " + reason + "\n" + OneLineUsageErrors.HINT + "\n");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aSubcommandAndTheBootstrapServerAreRequired() {
        usageError(
                "a subcommand is required: list, describe, describe-producers, find-hanging or abort",
                "--bootstrap-server",
                NOBODY);
        usageError("Missing required option: '--bootstrap-server=<bootstrapServer>'", "list");
        ToolRun unknown = run("--bootstrap-server", NOBODY, "commit");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("commit");
    }

    @Test
    void describeAndDescribeProducersNeedTheirTargets() {
        usageError(
                "Missing required option: '--transactional-id=<transactionalId>'",
                "--bootstrap-server",
                NOBODY,
                "describe");
        usageError(
                "--transactional-id must not be empty",
                "--bootstrap-server",
                NOBODY,
                "describe",
                "--transactional-id",
                "");
        usageError(
                "--partition must be >= 0, got -1",
                "--bootstrap-server",
                NOBODY,
                "describe-producers",
                "--topic",
                "t",
                "--partition",
                "-1");
        ToolRun notANumber =
                run("--bootstrap-server", NOBODY, "describe-producers", "--topic", "t", "--partition", "x");
        assertThat(notANumber.exit()).isEqualTo(2);
        assertThat(notANumber.err()).startsWith("error: Invalid value for option '--partition': 'x'");
    }

    @Test
    void negativeIdsAndEpochsAreUsageErrorsBeforeAnyBrokerIsAsked() {
        usageError(
                "--broker-id must be >= 0, got -3", "--bootstrap-server", NOBODY, "find-hanging", "--broker-id", "-3");
        usageError(
                "--producer-epoch and --coordinator-epoch must be >= 0, got -4 and -9",
                "--bootstrap-server",
                NOBODY,
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
                "--producer-id",
                "5",
                "--producer-epoch",
                "-4",
                "--coordinator-epoch",
                "-9");
    }

    @Test
    void findHangingTakesExactlyOneScope() {
        usageError(
                "find-hanging needs exactly one of --broker-id or --topic",
                "--bootstrap-server",
                NOBODY,
                "find-hanging");
        usageError(
                "find-hanging needs exactly one of --broker-id or --topic",
                "--bootstrap-server",
                NOBODY,
                "find-hanging",
                "--broker-id",
                "0",
                "--topic",
                "t");
        usageError(
                "--partition needs --topic",
                "--bootstrap-server",
                NOBODY,
                "find-hanging",
                "--broker-id",
                "0",
                "--partition",
                "1");
        usageError(
                "--max-transaction-timeout must be >= 0 minutes, got -5",
                "--bootstrap-server",
                NOBODY,
                "find-hanging",
                "--topic",
                "t",
                "--max-transaction-timeout",
                "-5");
    }

    @Test
    void abortNamesTheTransactionByStartOffsetOrByItsFullIdentity() {
        String either = "abort needs either --start-offset or all of --producer-id, --producer-epoch and"
                + " --coordinator-epoch";
        usageError(either, "--bootstrap-server", NOBODY, "abort", "--topic", "t", "--partition", "0");
        usageError(
                either,
                "--bootstrap-server",
                NOBODY,
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
                "--start-offset",
                "3",
                "--producer-id",
                "7");
        usageError(
                "abort without --start-offset needs all of --producer-id, --producer-epoch and --coordinator-epoch",
                "--bootstrap-server",
                NOBODY,
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
                "--producer-id",
                "7",
                "--producer-epoch",
                "0");
        usageError(
                "--start-offset and --producer-id must be >= 0",
                "--bootstrap-server",
                NOBODY,
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
                "--start-offset",
                "-2");
        usageError(
                "Missing required options: '--topic=<topic>', '--partition=<partition>'",
                "--bootstrap-server",
                NOBODY,
                "abort",
                "--start-offset",
                "0");
    }

    /** Kafka's tools take the global flags anywhere; so does this one: before or after the subcommand. */
    @Test
    void theGlobalFlagsMayComeBeforeOrAfterTheSubcommand() {
        List<List<String>> forms = List.of(
                List.of("--bootstrap-server", NOBODY, "--command-property", "client.id=x", "list"),
                List.of("list", "--bootstrap-server", NOBODY, "--command-property", "client.id=x"),
                List.of("--command-property", "client.id=x", "list", "--bootstrap-server", NOBODY));
        for (List<String> form : forms) {
            TransactionsCommand cmd = new TransactionsCommand();
            Tools.commandLine(cmd).parseArgs(form.toArray(String[]::new));
            assertThat(cmd.bootstrapServer).as(form.toString()).isEqualTo(NOBODY);
            assertThat(cmd.props).as(form.toString()).containsExactly(Map.entry("client.id", "x"));
        }
        // Executed: the flag after the subcommand counts, so the subcommand's own check is what fails.
        usageError(
                "Missing required option: '--transactional-id=<transactionalId>'",
                "describe",
                "--bootstrap-server",
                NOBODY);
        usageError(
                "find-hanging needs exactly one of --broker-id or --topic",
                "find-hanging",
                "--bootstrap-server",
                NOBODY);
        // Still required somewhere.
        usageError("Missing required option: '--bootstrap-server=<bootstrapServer>'", "find-hanging", "--topic", "t");
    }
}
