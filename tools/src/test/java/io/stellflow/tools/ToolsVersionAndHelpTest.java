package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.StellflowVersion;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every tool answers {@code --version} with the release it was built as (issue #22: it printed
 * nothing), built as its {@code main} builds it; {@code stellflow-configs.sh --help} shows a comma,
 * not the regex that splits {@code --add-config}; {@code stellflow-topics.sh --help} gives the
 * defaults {@code --create} really takes (it said {@code --replication-factor} was required with
 * {@code --config}, and 1 partition, where the broker's defaults apply).
 */
class ToolsVersionAndHelpTest {
    /** Each tool's command line as its main builds it. */
    private static List<CommandLine> tools() {
        return List.of(
                Tools.commandLine(new TopicsCommand()),
                Tools.commandLine(new ConsoleProducer()),
                Tools.commandLine(new ConsoleConsumer()),
                Tools.commandLine(new ConsumerGroupsCommand()),
                Tools.withVersion(new CommandLine(new ClusterCommand())),
                Tools.commandLine(new ConfigsCommand()),
                OneLineUsageErrors.commandLine(new DeleteRecordsCommand()),
                Tools.commandLine(new TransactionsCommand()),
                Tools.withVersion(new CommandLine(new MetadataQuorumCommand())),
                Tools.withVersion(new CommandLine(new LeaderElectionCommand())));
    }

    @Test
    void everyToolPrintsTheVersion() {
        String expected = "Stellflow " + StellflowVersion.version() + "\n";
        assertThat(StellflowVersion.version()).matches("\\d+\\.\\d+\\.\\d+.*");
        for (CommandLine tool : tools()) {
            ToolRun r = ToolRun.run(tool, "--version");
            assertThat(r.exit()).as(tool.getCommandName()).isZero();
            assertThat(r.out()).as(tool.getCommandName()).isEqualTo(expected);
        }
    }

    @Test
    void configsHelpShowsNoRegex() {
        ToolRun r = ToolRun.run(Tools.commandLine(new ConfigsCommand()), "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .doesNotContain("(?=")
                .contains("--add-config=key=value[,key=value...]")
                .contains("--delete-config=key[,key...]");
    }

    @Test
    void topicsHelpGivesTheBrokersDefaultsForCreate() {
        ToolRun r = ToolRun.run(Tools.commandLine(new TopicsCommand()), "--help");
        assertThat(r.exit()).isZero();
        // Without blanks: picocli wraps the descriptions, also after a dot (num. partitions).
        String help = r.out().replaceAll("\\s+", "");
        assertThat(help)
                .doesNotContain("requiredwith--config")
                .doesNotContain("(default1)")
                .contains("(default:thebroker'snum.partitions;1with--bootstrap-controller)")
                .contains("(default:thebroker'sdefault.replication.factor,alsowith--config;1with"
                        + "--bootstrap-controller)");
    }
}
