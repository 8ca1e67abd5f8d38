package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * DeleteRecords (apiKey 27, {@code docs/protocol-additions.md}) byte-exact against hand-built bodies
 * in both directions, the worked examples of the codecs' Javadoc among them; then strict decoding:
 * trailing bytes, every truncation, a null topics array, a null topic.
 */
class DeleteRecordsTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final List<BodyGolden> GOLDENS = List.of(
            BodyGolden.of(
                    "DeleteRecordsRequest, the worked example",
                    new DeleteRecordsRequest(List.of(
                            new DeleteRecordsRequest.Topic("t", List.of(new DeleteRecordsRequest.Partition(0, 5))))),
                    DeleteRecordsRequest::read,
                    "00000001" + str("t") + "00000001" + "00000000" + "0000000000000005"),
            BodyGolden.of(
                    "DeleteRecordsRequest, to the high watermark, two topics",
                    new DeleteRecordsRequest(List.of(
                            new DeleteRecordsRequest.Topic(
                                    "a",
                                    List.of(new DeleteRecordsRequest.Partition(
                                            2, DeleteRecordsRequest.HIGH_WATERMARK))),
                            new DeleteRecordsRequest.Topic("b", List.of()))),
                    DeleteRecordsRequest::read,
                    "00000002" + str("a") + "00000001" + "00000002" + "ffffffffffffffff" + str("b") + "00000000"),
            BodyGolden.of(
                    "DeleteRecordsResponse, the worked example",
                    new DeleteRecordsResponse(List.of(new DeleteRecordsResponse.Topic(
                            "t", List.of(new DeleteRecordsResponse.Partition(0, Errors.NONE, 5))))),
                    DeleteRecordsResponse::read,
                    "00000001" + str("t") + "00000001" + "00000000" + "0000" + "0000000000000005"),
            BodyGolden.of(
                    "DeleteRecordsResponse, an offset above the high watermark",
                    new DeleteRecordsResponse(List.of(new DeleteRecordsResponse.Topic(
                            "t", List.of(new DeleteRecordsResponse.Partition(3, Errors.OFFSET_OUT_OF_RANGE, -1))))),
                    DeleteRecordsResponse::read,
                    "00000001" + str("t") + "00000001" + "00000003" + "000b" + "ffffffffffffffff"));

    @Test
    void encodesAndDecodesExactly() {
        BodyGolden.assertEncodesAndDecodes(GOLDENS, bufs);
    }

    @Test
    void decodingIsStrict() {
        BodyGolden.assertStrict(GOLDENS, bufs);
        for (String bad : new String[] {"ffffffff", "00000001" + "ffff" + "00000000"}) {
            ByteBuf body = bufs.hex(bad);
            assertProtocolError(() -> DeleteRecordsRequest.read(body), Errors.INVALID_REQUEST);
        }
        ByteBuf response = bufs.hex("ffffffff");
        assertProtocolError(() -> DeleteRecordsResponse.read(response), Errors.INVALID_REQUEST);
    }
}
