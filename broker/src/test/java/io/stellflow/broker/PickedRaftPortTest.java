package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.testsupport.IntegrationTest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The embedded controller's Raft port on a single node. On a port-0 listener it is picked at
 * configuration time; another process can take it before Ratis binds it (a CI run lost its test JVM
 * that way: Ratis called {@code System.exit(1)}). A picked port that is taken is replaced; a
 * configured one that is taken fails the start with a ConfigException naming the key, and the JVM goes on.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class PickedRaftPortTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @TempDir
    Path dir;

    private Properties props(int listenerPort) {
        TestTransports.assumeSelected(transport);
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + listenerPort);
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("transport", transport);
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        return p;
    }

    @Test
    void aPickedRaftPortTakenBeforeTheStartIsReplaced() throws Exception {
        BrokerConfig config = BrokerConfig.fromProperties(props(0));
        assertThat(config.cluster().raftPortPicked()).isTrue();
        int picked = config.cluster().controller().self().raftPort();
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), picked), 1);
            try (StellflowServer server = StellflowServer.start(config)) {
                assertThat(server.controller().raftAddress())
                        .as("another port than the taken one")
                        .isNotEqualTo("127.0.0.1:" + picked);
                Properties client = new Properties();
                client.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
                try (StellflowAdmin admin = new StellflowAdmin(client)) {
                    admin.createTopic("after-retry", 1);
                }
                assertThat(server.controller().isActive()).isTrue();
            }
        }
    }

    @Test
    void aConfiguredRaftPortThatIsTakenFailsTheStartNamingTheKey() throws Exception {
        try (ServerSocket raft = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Properties p = props(LoopbackPorts.pick());
            p.setProperty("node.id", "1");
            p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + raft.getLocalPort());
            p.setProperty("controller.listener", "127.0.0.1:0");
            BrokerConfig config = BrokerConfig.fromProperties(p);
            assertThat(config.cluster().raftPortPicked()).isFalse();
            // Refused before Ratis starts, naming the key (ListenPorts; operator trial, #22).
            assertThatThrownBy(() -> StellflowServer.start(config))
                    .isInstanceOf(io.stellflow.server.common.config.ConfigException.class)
                    .hasMessageContaining("'controller.quorum.voters'")
                    .hasMessageContaining("cannot listen on 127.0.0.1:" + raft.getLocalPort());
        }
        // Still here: the JVM was not ended, and the data port and directory are free for a retry.
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(props(0)))) {
            assertThat(server.port()).isPositive();
        }
    }
}
