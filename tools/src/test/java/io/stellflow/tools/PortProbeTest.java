package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@link PortProbe#classify}: what the first bytes of an answer say about the port. */
class PortProbeTest {

    @Test
    void ourFrameWithOurCorrelationIdIsTheDataPlane() {
        // length 0x2a, then the correlation id of the probe's ApiVersions request
        byte[] head = {0, 0, 0, 0x2a, 0x5f, 0x1e, 0x70, 0x01, 0};
        assertThat(PortProbe.classify(head, 9).kind()).isEqualTo(PortProbe.Kind.DATA_PLANE);
    }

    @Test
    void anHttp2SettingsOrGoawayFrameOnStreamZeroIsTheControlPlane() {
        // RFC 9113 §4.1: length 0x000012, type 4 (SETTINGS), flags 0, stream 0
        byte[] settings = {0, 0, 0x12, 0x04, 0, 0, 0, 0, 0};
        assertThat(PortProbe.classify(settings, 9).kind()).isEqualTo(PortProbe.Kind.CONTROL_PLANE);
        byte[] goaway = {0, 0, 0x08, 0x07, 0, 0, 0, 0, 0};
        assertThat(PortProbe.classify(goaway, 9).kind()).isEqualTo(PortProbe.Kind.CONTROL_PLANE);
        byte[] dataOnStream1 = {0, 0, 0x08, 0x00, 0, 0, 0, 0, 1};
        assertThat(PortProbe.classify(dataOnStream1, 9).kind()).isEqualTo(PortProbe.Kind.OTHER);
    }

    @Test
    void anythingElseIsOtherWithAReason() {
        byte[] http1 = "HTTP/1.1 400".getBytes(StandardCharsets.US_ASCII);
        PortProbe.Result r = PortProbe.classify(http1, 9);
        assertThat(r.kind()).isEqualTo(PortProbe.Kind.OTHER);
        assertThat(r.detail()).contains("HTTP/1");
        PortProbe.Result closed = PortProbe.classify(new byte[9], 0);
        assertThat(closed.kind()).isEqualTo(PortProbe.Kind.OTHER);
        assertThat(closed.detail()).isEqualTo("closed the connection without answering");
        byte[] otherCorrelation = {0, 0, 0, 0x2a, 0, 0, 0, 0x07, 0};
        assertThat(PortProbe.classify(otherCorrelation, 9).kind()).isEqualTo(PortProbe.Kind.OTHER);
    }
}
