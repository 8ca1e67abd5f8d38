package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.proto.ErrorCode;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ControllerOptionsTest {

    @Test
    void everyControllerToolTakesBothBootstrapFlagsEachWithItsOwnMeaningAndTheSameTimeoutDefault() {
        ClusterCommand cluster = new ClusterCommand();
        new CommandLine(cluster).parseArgs("--bootstrap-server", "h:1");
        assertThat(cluster.controller.bootstrapServer).isEqualTo("h:1");
        assertThat(cluster.controller.bootstrapController).isNull();
        assertThat(cluster.controller.timeoutMs).isEqualTo(15_000L);

        ConfigsCommand configs = new ConfigsCommand();
        new CommandLine(configs)
                .parseArgs("--bootstrap-controller", "h:2", "--timeout-ms", "300", "--topic", "t", "--describe");
        assertThat(configs.controller.bootstrapController).isEqualTo("h:2");
        assertThat(configs.controller.bootstrapServer).isNull();
        assertThat(configs.controller.timeoutMs).isEqualTo(300L);

        LeaderElectionCommand election = new LeaderElectionCommand();
        new CommandLine(election)
                .parseArgs("--bootstrap-controller", "h:3", "--election-type", "preferred", "--all-topic-partitions");
        assertThat(election.controller.bootstrapController).isEqualTo("h:3");

        MetadataQuorumCommand quorum = new MetadataQuorumCommand();
        new CommandLine(quorum).parseArgs("--bootstrap-controller", "h:4", "--timeout-ms", "7", "describe");
        assertThat(quorum.controller.bootstrapController).isEqualTo("h:4");
        assertThat(quorum.controller.timeoutMs).isEqualTo(7L);
    }

    @Test
    void theBootstrapFlagsOfAToolWithSubcommandsMayFollowTheSubcommand() {
        MetadataQuorumCommand after = new MetadataQuorumCommand();
        new CommandLine(after).parseArgs("describe", "--bootstrap-controller", "h:5", "--timeout-ms", "8");
        assertThat(after.controller.bootstrapController).isEqualTo("h:5");
        assertThat(after.controller.timeoutMs).isEqualTo(8L);

        MetadataQuorumCommand mixed = new MetadataQuorumCommand();
        new CommandLine(mixed).parseArgs("--timeout-ms", "9", "describe", "--bootstrap-server", "h:6");
        assertThat(mixed.controller.bootstrapServer).isEqualTo("h:6");
        assertThat(mixed.controller.bootstrapController).isNull();
        assertThat(mixed.controller.timeoutMs).isEqualTo(9L); // the subcommand's default does not reset it
    }

    @Test
    void aMissingBootstrapIsAUsageErrorNamingBothOptions() {
        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new LeaderElectionCommand())
                .setErr(new PrintWriter(err))
                .execute("--election-type", "preferred", "--all-topic-partitions");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString())
                .contains("give exactly one of --bootstrap-server (brokers) and --bootstrap-controller (controllers)");
    }

    @Test
    void aRefusalPrintsTheCodeAndMessageAndExits1() {
        StringWriter err = new StringWriter();
        PrintWriter w = new PrintWriter(err, true);
        assertThat(ControllerOptions.refused(w, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no topic 'x'"))
                .isEqualTo(1);
        assertThat(err.toString()).isEqualTo("error: UNKNOWN_TOPIC_OR_PARTITION no topic 'x'" + System.lineSeparator());
    }
}
