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
 * ListTransactions (32), DescribeTransactions (33) and DescribeProducers (34), {@code
 * docs/protocol-additions.md}: byte-exact against hand-built bodies in both directions (the worked
 * examples of the codecs' Javadoc among them), then strict decoding: trailing bytes, every
 * truncation, null arrays and strings.
 */
class TransactionAdminMessagesTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final List<BodyGolden> GOLDENS = List.of(
            BodyGolden.of(
                    "ListTransactionsRequest, the worked example",
                    new ListTransactionsRequest(List.of("Ongoing"), List.of(1000L)),
                    ListTransactionsRequest::read,
                    "00000001" + str("Ongoing") + "00000001" + "00000000000003e8"),
            BodyGolden.of(
                    "ListTransactionsRequest, no filter",
                    new ListTransactionsRequest(List.of(), List.of()),
                    ListTransactionsRequest::read,
                    "00000000" + "00000000"),
            BodyGolden.of(
                    "ListTransactionsResponse, the worked example",
                    new ListTransactionsResponse(
                            Errors.NONE,
                            List.of(new ListTransactionsResponse.ListedTransaction("tx", 1000, "Ongoing"))),
                    ListTransactionsResponse::read,
                    "0000" + "00000001" + str("tx") + "00000000000003e8" + str("Ongoing")),
            BodyGolden.of(
                    "DescribeTransactionsRequest, the worked example",
                    new DescribeTransactionsRequest(List.of("tx")),
                    DescribeTransactionsRequest::read,
                    "00000001" + str("tx")),
            BodyGolden.of(
                    "DescribeTransactionsResponse, the worked example",
                    new DescribeTransactionsResponse(List.of(new DescribeTransactionsResponse.DescribedTransaction(
                            Errors.NONE,
                            "tx",
                            "Ongoing",
                            60_000,
                            1000,
                            1000,
                            (short) 1,
                            3,
                            List.of(new DescribeTransactionsResponse.TopicPartition("t", 0))))),
                    DescribeTransactionsResponse::read,
                    "00000001" + "0000" + str("tx") + str("Ongoing") + "0000ea60" + "00000000000003e8"
                            + "00000000000003e8" + "0001" + "0000000000000003" + "00000001" + str("t") + "00000000"),
            BodyGolden.of(
                    "DescribeTransactionsResponse, not the coordinator",
                    new DescribeTransactionsResponse(List.of(
                            DescribeTransactionsResponse.DescribedTransaction.of(Errors.NOT_COORDINATOR, "a", ""))),
                    DescribeTransactionsResponse::read,
                    "00000001" + "0011" + str("a") + "0000" + "ffffffff" + "ffffffffffffffff" + "ffffffffffffffff"
                            + "ffff" + "ffffffffffffffff" + "00000000"),
            BodyGolden.of(
                    "DescribeProducersRequest, the worked example",
                    new DescribeProducersRequest(List.of(new TopicPartitions("t", List.of(0)))),
                    DescribeProducersRequest::read,
                    "00000001" + str("t") + "00000001" + "00000000"),
            BodyGolden.of(
                    "DescribeProducersResponse, the worked example",
                    new DescribeProducersResponse(List.of(new DescribeProducersResponse.Topic(
                            "t",
                            List.of(new DescribeProducersResponse.Partition(
                                    0,
                                    Errors.NONE,
                                    List.of(new DescribeProducersResponse.Producer(
                                            1000, (short) 1, 4, 2000, -1, 7, 3))))))),
                    DescribeProducersResponse::read,
                    "00000001" + str("t") + "00000001" + "00000000" + "0000" + "00000001" + "00000000000003e8" + "0001"
                            + "00000004" + "00000000000007d0" + "ffffffff" + "0000000000000007" + "0000000000000003"),
            BodyGolden.of(
                    "DescribeProducersResponse, not the leader",
                    new DescribeProducersResponse(List.of(new DescribeProducersResponse.Topic(
                            "t",
                            List.of(new DescribeProducersResponse.Partition(
                                    2, Errors.NOT_LEADER_OR_FOLLOWER, List.of()))))),
                    DescribeProducersResponse::read,
                    "00000001" + str("t") + "00000001" + "00000002" + "0009" + "00000000"));

    @Test
    void encodesAndDecodesExactly() {
        BodyGolden.assertEncodesAndDecodes(GOLDENS, bufs);
    }

    @Test
    void decodingIsStrict() {
        BodyGolden.assertStrict(GOLDENS, bufs);
        // null arrays and a null string where the layout has none
        ByteBuf nullStates = bufs.hex("ffffffff" + "00000000");
        assertProtocolError(() -> ListTransactionsRequest.read(nullStates), Errors.INVALID_REQUEST);
        ByteBuf nullId = bufs.hex("00000001" + "ffff");
        assertProtocolError(() -> DescribeTransactionsRequest.read(nullId), Errors.INVALID_REQUEST);
        ByteBuf nullPartitions = bufs.hex("00000001" + str("t") + "ffffffff");
        assertProtocolError(() -> DescribeProducersRequest.read(nullPartitions), Errors.INVALID_REQUEST);
        ByteBuf nullTopics = bufs.hex("ffffffff");
        assertProtocolError(() -> DescribeProducersResponse.read(nullTopics), Errors.INVALID_REQUEST);
        ByteBuf nullTransactions = bufs.hex("0000ffffffff");
        assertProtocolError(() -> ListTransactionsResponse.read(nullTransactions), Errors.INVALID_REQUEST);
        ByteBuf negative = bufs.hex("fffffffe");
        assertProtocolError(() -> DescribeTransactionsResponse.read(negative), Errors.INVALID_REQUEST);
    }
}
