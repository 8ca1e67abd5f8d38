package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * TxnOffsetCommit (apiKey 31, {@code docs/protocol-additions.md}) byte-exact against hand-built
 * bodies in both directions, the worked example of the codec's Javadoc and of the additions page
 * among them; then strict decoding: trailing bytes, every truncation, a null transactional id or
 * group id (required strings), a topics count below -1.
 */
class TxnOffsetCommitTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final List<BodyGolden> GOLDENS = List.of(
            BodyGolden.of(
                    "TxnOffsetCommitRequest, the worked example",
                    new TxnOffsetCommitRequest(
                            "tx",
                            "g",
                            1000,
                            (short) 1,
                            TxnOffsetCommitRequest.UNKNOWN_TRANSACTION_SEQUENCE,
                            null,
                            OffsetCommitRequest.NO_MEMBER_EPOCH,
                            List.of(new OffsetCommitTopic("t", List.of(new OffsetCommitPartition(0, 5, null))))),
                    TxnOffsetCommitRequest::read,
                    ("0002 7478 0001 67 00000000000003e8 0001 ffffffffffffffff ffff ffffffff 00000001 0001 74"
                                    + " 00000001 00000000 0000000000000005 ffff")
                            .replace(" ", "")),
            BodyGolden.of(
                    "TxnOffsetCommitRequest, a member at epoch 7 in transaction 3, metadata \"m\"",
                    new TxnOffsetCommitRequest(
                            "tx",
                            "g",
                            1000,
                            (short) 1,
                            3,
                            "m1",
                            7,
                            List.of(new OffsetCommitTopic("t", List.of(new OffsetCommitPartition(2, 9, "m"))))),
                    TxnOffsetCommitRequest::read,
                    str("tx") + str("g") + "00000000000003e8" + "0001" + "0000000000000003" + str("m1") + "00000007"
                            + "00000001" + str("t") + "00000001" + "00000002" + "0000000000000009" + str("m")),
            BodyGolden.of(
                    "TxnOffsetCommit answer (OffsetCommitResponse's layout): t-0 fenced",
                    new OffsetCommitResponse(List.of(new OffsetCommitResponse.OffsetCommitTopicResponse(
                            "t",
                            List.of(new OffsetCommitResponse.OffsetCommitPartitionResponse(
                                    0, Errors.INVALID_PRODUCER_EPOCH))))),
                    OffsetCommitResponse::read,
                    "00000001 0001 74 00000001 00000000 0015".replace(" ", "")));

    @Test
    void encodesAndDecodesExactly() {
        BodyGolden.assertEncodesAndDecodes(GOLDENS, bufs);
    }

    @Test
    void decodingIsStrict() {
        BodyGolden.assertStrict(GOLDENS, bufs);
        for (String bad : new String[] {
            "ffff" + str("g"), // null transactionalId
            str("tx") + "ffff", // null groupId
            str("tx") + str("g") + "00000000000003e8" + "0001" + "ffffffffffffffff" + "ffff" + "ffffffff" + "fffffffe"
        }) {
            ByteBuf body = bufs.hex(bad);
            assertProtocolError(() -> TxnOffsetCommitRequest.read(body), Errors.INVALID_REQUEST);
        }
    }
}
