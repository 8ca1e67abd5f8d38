package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class RestartTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @Test
    void everythingProducedIsFetchedBackAfterARestart() throws Exception {
        try (StellflowServer server = TestBroker.start(NODES.dir(), transport);
                RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "kept", 2);
            for (int i = 0; i < 10; i++) {
                Requests.produceOne(client, "kept", i % 2, Requests.batch(i + 1, 1000 + i));
            }
        }
        StellflowServer server = NODES.start(transport);
        try (RawClient client = new RawClient(server.port())) {
            PartitionData p0 = Requests.fetchOne(client, Requests.fetch("kept", 0, 0, 0));
            PartitionData p1 = Requests.fetchOne(client, Requests.fetch("kept", 1, 0, 0));
            List<DecodedRecord> r0 = RecordBatchReader.decode(p0.records(), 0);
            List<DecodedRecord> r1 = RecordBatchReader.decode(p1.records(), 0);
            assertThat(r0).hasSize(1 + 3 + 5 + 7 + 9);
            assertThat(r1).hasSize(2 + 4 + 6 + 8 + 10);
            for (int i = 0; i < r0.size(); i++) {
                assertThat(r0.get(i).offset()).isEqualTo(i);
            }
            assertThat(p0.highWatermark()).isEqualTo(25);
            // Appends continue after the recovered end.
            assertThat(Requests.produceOne(client, "kept", 0, Requests.g2()).baseOffset())
                    .isEqualTo(25);
            assertThat(Requests.produceOne(client, "kept", 0, Requests.g2()).errorCode())
                    .isEqualTo(Errors.NONE);
        }
    }

    @Test
    void aBusyPortFailsStartAndReleasesTheLogDir() throws Exception {
        Path other = NODES.dir().resolve("other");
        try (StellflowServer server = TestBroker.start(NODES.dir().resolve("first"), transport)) {
            Properties props = TestBroker.props(other, transport);
            props.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + server.port());
            assertThatThrownBy(() -> TestBroker.start(props)).isInstanceOf(Exception.class);
        }
        StellflowServer again = NODES.start(other, transport);
        assertThat(again.port()).isPositive();
    }

    @Test
    void aSecondBrokerOnTheSameLogDirIsRefused() throws Exception {
        StellflowServer server = NODES.start(transport);
        assertThat(server.port()).isPositive();
        assertThatThrownBy(() -> TestBroker.start(NODES.dir(), transport))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("in use");
    }
}
