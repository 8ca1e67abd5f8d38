package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.NULL_ARRAY;
import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeLogDirsResponse.LogDir;
import io.stellflow.protocol.message.DescribeLogDirsResponse.PartitionSize;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * DescribeLogDirs (apiKey 26, {@code docs/protocol-additions.md}) byte-exact against hand-built bodies
 * in both directions, the worked examples of the codecs' Javadoc and the additions page among them;
 * then strict decoding: trailing bytes, every truncation, a topics count below -1, a null topic.
 */
class DescribeLogDirsTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final List<BodyGolden> GOLDENS = List.of(
            BodyGolden.of(
                    "DescribeLogDirsRequest, topic t",
                    new DescribeLogDirsRequest(List.of("t")),
                    DescribeLogDirsRequest::read,
                    "00000001" + str("t")),
            BodyGolden.of(
                    "DescribeLogDirsRequest, every topic",
                    new DescribeLogDirsRequest(null),
                    DescribeLogDirsRequest::read,
                    NULL_ARRAY),
            BodyGolden.of(
                    "DescribeLogDirsResponse, the worked example",
                    new DescribeLogDirsResponse(List.of(
                            new LogDir("/d", Errors.NONE, 4096, 1024, List.of(new PartitionSize("t", 0, 130, 2))))),
                    DescribeLogDirsResponse::read,
                    "00000001" + str("/d") + "0000" + "0000000000001000" + "0000000000000400" + "00000001" + str("t")
                            + "00000000" + "0000000000000082" + "0000000000000002"),
            BodyGolden.of(
                    "DescribeLogDirsResponse, an offline dir and an empty one",
                    new DescribeLogDirsResponse(List.of(
                            new LogDir("/a", Errors.BROKER_NOT_AVAILABLE, -1, -1, List.of()),
                            new LogDir("/b", Errors.NONE, 1, 0, List.of()))),
                    DescribeLogDirsResponse::read,
                    "00000002" + str("/a") + "0007" + "ffffffffffffffff" + "ffffffffffffffff" + "00000000" + str("/b")
                            + "0000" + "0000000000000001" + "0000000000000000" + "00000000"));

    @Test
    void encodesAndDecodesExactly() {
        BodyGolden.assertEncodesAndDecodes(GOLDENS, bufs);
    }

    @Test
    void decodingIsStrict() {
        BodyGolden.assertStrict(GOLDENS, bufs);
        for (String bad : new String[] {"fffffffe", "00000001" + "ffff"}) {
            ByteBuf body = bufs.hex(bad);
            assertProtocolError(() -> DescribeLogDirsRequest.read(body), Errors.INVALID_REQUEST);
        }
    }
}
