package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.NULL_ARRAY;
import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse.Entry;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * DescribeBrokerConfigs (apiKey 28, {@code docs/protocol-additions.md}) byte-exact against hand-built
 * bodies in both directions, the worked examples of the codecs' Javadoc among them; then strict
 * decoding: trailing bytes, every truncation, a keys count below -1, a source other than 0 or 1.
 */
class DescribeBrokerConfigsTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final List<BodyGolden> GOLDENS = List.of(
            BodyGolden.of(
                    "DescribeBrokerConfigsRequest, key a",
                    new DescribeBrokerConfigsRequest(List.of("a")),
                    DescribeBrokerConfigsRequest::read,
                    "00000001" + str("a")),
            BodyGolden.of(
                    "DescribeBrokerConfigsRequest, every key",
                    new DescribeBrokerConfigsRequest(null),
                    DescribeBrokerConfigsRequest::read,
                    NULL_ARRAY),
            BodyGolden.of(
                    "DescribeBrokerConfigsResponse, the worked example",
                    new DescribeBrokerConfigsResponse(1, List.of(new Entry("a", "b", (byte) 1))),
                    DescribeBrokerConfigsResponse::read,
                    "00000001" + "00000001" + str("a") + str("b") + "01"),
            BodyGolden.of(
                    "DescribeBrokerConfigsResponse, a default and a sensitive key",
                    new DescribeBrokerConfigsResponse(
                            7, List.of(new Entry("m", "1", (byte) 0), new Entry("s", null, (byte) 1))),
                    DescribeBrokerConfigsResponse::read,
                    "00000007" + "00000002" + str("m") + str("1") + "00" + str("s") + "ffff" + "01"));

    @Test
    void encodesAndDecodesExactly() {
        BodyGolden.assertEncodesAndDecodes(GOLDENS, bufs);
    }

    @Test
    void decodingIsStrict() {
        BodyGolden.assertStrict(GOLDENS, bufs);
        ByteBuf badCount = bufs.hex("fffffffe");
        assertProtocolError(() -> DescribeBrokerConfigsRequest.read(badCount), Errors.INVALID_REQUEST);
        ByteBuf badSource = bufs.hex("00000001" + "00000001" + str("a") + str("b") + "02");
        assertProtocolError(() -> DescribeBrokerConfigsResponse.read(badSource), Errors.INVALID_REQUEST);
    }
}
