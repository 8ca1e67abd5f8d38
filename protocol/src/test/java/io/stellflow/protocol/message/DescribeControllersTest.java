package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeControllersResponse.ControllerEndpoint;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * DescribeControllers (apiKey 60, {@code docs/protocol-additions.md}) byte-exact against hand-built
 * bodies (the Javadoc's worked example among them), in both directions, then strict decoding.
 */
class DescribeControllersTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final List<BodyGolden> GOLDENS = List.of(
            BodyGolden.of(
                    "response, one controller (the Javadoc's example)",
                    new DescribeControllersResponse(Errors.NONE, List.of(new ControllerEndpoint("127.0.0.1", 9094))),
                    DescribeControllersResponse::read,
                    "0000" + "00000001" + str("127.0.0.1") + "00002386"),
            BodyGolden.of(
                    "response, two controllers",
                    new DescribeControllersResponse(
                            Errors.NONE, List.of(new ControllerEndpoint("a", 1), new ControllerEndpoint("::1", 65535))),
                    DescribeControllersResponse::read,
                    "0000" + "00000002" + str("a") + "00000001" + str("::1") + "0000ffff"));

    @Test
    void bodiesEncodeAndDecodeExactly() {
        BodyGolden.assertEncodesAndDecodes(GOLDENS, bufs);
        BodyGolden.assertStrict(GOLDENS, bufs);
    }

    @Test
    void theRequestIsEmptyAndRefusesTrailingBytes() {
        assertThat(DescribeControllersRequest.read(bufs.hex(""))).isEqualTo(DescribeControllersRequest.INSTANCE);
        assertProtocolError(() -> DescribeControllersRequest.read(bufs.hex("00")), Errors.INVALID_REQUEST);
    }

    @Test
    void anEndpointPrintsAsHostPortWithIpv6InBrackets() {
        assertThat(new ControllerEndpoint("127.0.0.1", 9094).hostPort()).isEqualTo("127.0.0.1:9094");
        assertThat(new ControllerEndpoint("::1", 9094).hostPort()).isEqualTo("[::1]:9094");
    }
}
