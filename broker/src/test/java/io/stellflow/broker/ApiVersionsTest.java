package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.ApiVersionsResponse.ApiVersionRange;
import io.stellflow.testsupport.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class ApiVersionsTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    static final String G1 = "0000003d0000000000020000000100026331ffffffff00ffffffffffff00ffff000000127374656c6c666c"
            + "6f772d6a6176612d73646b0005302e302e3100000000";

    /** ApiVersions changes no broker state: one node per transport serves every test. */
    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    RawClient client;

    @BeforeEach
    void connect() throws Exception {
        client = new RawClient(BROKERS.get(transport).port());
    }

    @AfterEach
    void disconnect() throws Exception {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void listsExactlyTheImplementedApisWithTheirMaxVersionsAndOnlyWorkingFeatures() throws Exception {
        RawClient.Response r =
                client.call(ApiKeys.API_VERSIONS, 1, new ApiVersionsRequest("stellflow-java-sdk", "0.0.1", List.of()));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        ApiVersionsResponse body = ApiVersionsResponse.read(r.body());
        assertThat(body.apiVersions())
                .containsExactly(
                        new ApiVersionRange((short) 0, (short) 0, (short) 0),
                        new ApiVersionRange((short) 1, (short) 0, (short) 0),
                        new ApiVersionRange((short) 2, (short) 0, (short) 2),
                        new ApiVersionRange((short) 3, (short) 0, (short) 2),
                        new ApiVersionRange((short) 4, (short) 0, (short) 0),
                        new ApiVersionRange((short) 5, (short) 0, (short) 1),
                        new ApiVersionRange((short) 6, (short) 0, (short) 1),
                        new ApiVersionRange((short) 7, (short) 0, (short) 1),
                        new ApiVersionRange((short) 8, (short) 0, (short) 0),
                        new ApiVersionRange((short) 9, (short) 0, (short) 0),
                        new ApiVersionRange((short) 10, (short) 0, (short) 0),
                        new ApiVersionRange((short) 11, (short) 0, (short) 1),
                        new ApiVersionRange((short) 12, (short) 0, (short) 1),
                        new ApiVersionRange((short) 13, (short) 0, (short) 2),
                        new ApiVersionRange((short) 20, (short) 0, (short) 0),
                        new ApiVersionRange((short) 21, (short) 0, (short) 0),
                        new ApiVersionRange((short) 22, (short) 0, (short) 0),
                        new ApiVersionRange((short) 23, (short) 0, (short) 0),
                        new ApiVersionRange((short) 24, (short) 0, (short) 0),
                        new ApiVersionRange((short) 25, (short) 0, (short) 0),
                        new ApiVersionRange((short) 26, (short) 0, (short) 0),
                        new ApiVersionRange((short) 27, (short) 0, (short) 0),
                        new ApiVersionRange((short) 28, (short) 0, (short) 0),
                        new ApiVersionRange((short) 29, (short) 0, (short) 0),
                        new ApiVersionRange((short) 30, (short) 0, (short) 0),
                        new ApiVersionRange((short) 31, (short) 0, (short) 0),
                        new ApiVersionRange((short) 32, (short) 0, (short) 0),
                        new ApiVersionRange((short) 33, (short) 0, (short) 0),
                        new ApiVersionRange((short) 34, (short) 0, (short) 0),
                        new ApiVersionRange((short) 35, (short) 0, (short) 0),
                        new ApiVersionRange((short) 50, (short) 0, (short) 2),
                        new ApiVersionRange((short) 51, (short) 0, (short) 0),
                        new ApiVersionRange((short) 60, (short) 0, (short) 0),
                        new ApiVersionRange((short) 100, (short) 0, (short) 0));
        assertThat(body.brokerSoftwareName()).isEqualTo("stellflow-broker");
        assertThat(body.brokerSoftwareVersion()).isNotEmpty();
        assertThat(body.supportedFeatures())
                .containsExactly(
                        "fetch.long_poll",
                        "compression.gzip",
                        "compression.snappy",
                        "compression.lz4",
                        "compression.zstd",
                        "producer.idempotence");
    }

    @Test
    void goldenG1IsAnswered() throws Exception {
        client.sendRaw(ByteBufUtil.decodeHexDump(G1));
        RawClient.Response r = client.receive();
        assertThat(r.correlationId()).isEqualTo(1);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        assertThat(ApiVersionsResponse.read(r.body()).apiVersions()).hasSize(34);
    }

    @Test
    void g1WithApiVersionOneGivesGoldenG5() throws Exception {
        byte[] request = ByteBufUtil.decodeHexDump(G1);
        request[7] = 1;
        client.sendRaw(request);
        assertThat(ByteBufUtil.hexDump(client.receiveRawFrame())).isEqualTo("0000000c000000010002000200000000");
    }

    @Test
    void g1WithTrafficClassFourGivesHeaderOnlyInvalidRequest() throws Exception {
        byte[] request = ByteBufUtil.decodeHexDump(G1);
        request[29] = 4;
        client.sendRaw(request);
        assertThat(ByteBufUtil.hexDump(client.receiveRawFrame())).isEqualTo("0000000c000000010002000300000000");
    }

    @Test
    void headerVersionOtherThanTwoIsUnsupportedVersion() throws Exception {
        byte[] request = ByteBufUtil.decodeHexDump(G1);
        request[9] = 3;
        client.sendRaw(request);
        assertThat(ByteBufUtil.hexDump(client.receiveRawFrame())).isEqualTo("0000000c000000010002000200000000");
    }

    @Test
    void trailingBodyBytesAreInvalidRequestAndTheConnectionStays() throws Exception {
        byte[] g1 = ByteBufUtil.decodeHexDump(G1);
        byte[] request = Requests.concat(g1, new byte[] {0});
        request[3] = (byte) (request[3] + 1);
        client.sendRaw(request);
        assertThat(ByteBufUtil.hexDump(client.receiveRawFrame())).isEqualTo("0000000c000000010002000300000000");
        client.sendRaw(g1);
        assertThat(client.receive().errorCode()).isEqualTo(Errors.NONE);
    }
}
