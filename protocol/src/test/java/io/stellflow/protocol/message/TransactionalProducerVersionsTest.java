package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.Bufs.hexOf;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The versions our transactional producer sends ({@code docs/protocol-additions.md}, "Our
 * transactional producer"): Produce v2, InitProducerId v1, EndTransaction v1 and BeginTransaction
 * v1's response, byte-exact against the worked examples, each beside its v0 bytes; strict decoding.
 */
class TransactionalProducerVersionsTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    private String written(Consumer<ByteBuf> writer) {
        ByteBuf out = bufs.heap();
        writer.accept(out);
        return hexOf(out);
    }

    @Test
    void produceV2InsertsTheTransactionSequenceAfterTheTransactionalId() {
        ProduceRequest r = new ProduceRequest(
                "tx",
                3L,
                (short) -1,
                30_000,
                List.of(new ProduceRequest.TopicData("t", List.of(new ProduceRequest.PartitionData(0, null)))));
        String v2 = str("tx") + "0000000000000003" + "ffff" + "00007530" + "00000001" + str("t") + "00000001"
                + "00000000" + "ffffffff";
        assertThat(written(out -> r.write(out, (short) 2))).isEqualTo(v2);
        assertThat(written(out -> r.write(out, (short) 1)))
                .isEqualTo(
                        str("tx") + "ffff" + "00007530" + "00000001" + str("t") + "00000001" + "00000000" + "ffffffff");
        assertThat(ProduceRequest.read(bufs.hex(v2), (short) 2)).isEqualTo(r);
        // v0/v1 bytes read as v1 carry no sequence
        assertThat(ProduceRequest.read(bufs.hex(written(out -> r.write(out, (short) 1))), (short) 1)
                        .transactionSequence())
                .isEqualTo(-1L);
    }

    @Test
    void produceV2RefusesASequenceWithoutATransactionalIdOrBelowMinusOne() {
        String tail = "ffff" + "00007530" + "00000001" + str("t") + "00000001" + "00000000" + "ffffffff";
        assertProtocolError(
                () -> ProduceRequest.read(bufs.hex("ffff" + "0000000000000001" + tail), (short) 2),
                Errors.INVALID_REQUEST);
        assertProtocolError(
                () -> ProduceRequest.read(bufs.hex(str("tx") + "fffffffffffffffe" + tail), (short) 2),
                Errors.INVALID_REQUEST);
        assertThat(ProduceRequest.read(bufs.hex("ffff" + "ffffffffffffffff" + tail), (short) 2)
                        .transactionalId())
                .isNull();
        // a v2 body read as v1 is malformed (the 8 bytes shift every field)
        assertProtocolError(
                () -> ProduceRequest.read(bufs.hex(str("tx") + "0000000000000003" + tail), (short) 1),
                Errors.INVALID_REQUEST);
    }

    @Test
    void initProducerIdV1AppendsTheTransactionTimeout() {
        InitProducerIdRequest r = new InitProducerIdRequest("tx", 30_000);
        assertThat(written(out -> r.write(out, (short) 1))).isEqualTo(str("tx") + "00007530");
        assertThat(written(out -> r.write(out, (short) 0))).isEqualTo(str("tx"));
        assertThat(InitProducerIdRequest.read(bufs.hex(str("tx") + "00007530"), (short) 1))
                .isEqualTo(r);
        assertThat(InitProducerIdRequest.read(bufs.hex(str("tx")), (short) 0).transactionTimeoutMs())
                .isEqualTo(-1);
        assertProtocolError(() -> InitProducerIdRequest.read(bufs.hex(str("tx")), (short) 1), Errors.INVALID_REQUEST);
        assertProtocolError(
                () -> InitProducerIdRequest.read(bufs.hex(str("tx") + "00007530"), (short) 0), Errors.INVALID_REQUEST);
    }

    @Test
    void endTransactionV1AppendsTheSequenceAfterCommit() {
        EndTransactionRequest r = new EndTransactionRequest("tx", 1000, (short) 1, true, 3);
        String v1 = str("tx") + "00000000000003e8" + "0001" + "01" + "0000000000000003";
        assertThat(written(out -> r.write(out, (short) 1))).isEqualTo(v1);
        assertThat(written(out -> r.write(out, (short) 0))).isEqualTo(str("tx") + "00000000000003e8" + "0001" + "01");
        assertThat(EndTransactionRequest.read(bufs.hex(v1), (short) 1)).isEqualTo(r);
        assertThat(EndTransactionRequest.read(bufs.hex(str("tx") + "00000000000003e8" + "0001" + "00"))
                        .transactionSequence())
                .isEqualTo(-1L);
        assertProtocolError(() -> EndTransactionRequest.read(bufs.hex(v1), (short) 0), Errors.INVALID_REQUEST);
    }

    @Test
    void endTransactionV2HasTheBytesOfV1() {
        // docs/protocol-additions.md: abort of transaction 4, begun implicitly.
        EndTransactionRequest r = new EndTransactionRequest("tx", 1000, (short) 1, false, 4);
        String v2 = str("tx") + "00000000000003e8" + "0001" + "00" + "0000000000000004";
        assertThat(written(out -> r.write(out, EndTransactionRequest.VERSION_IMPLICIT_BEGIN)))
                .isEqualTo(v2);
        assertThat(EndTransactionRequest.read(bufs.hex(v2), EndTransactionRequest.VERSION_IMPLICIT_BEGIN))
                .isEqualTo(r);
    }

    @Test
    void beginTransactionV1ResponseAppendsTheSequence() {
        TransactionResponse r = new TransactionResponse(Errors.NONE, 1000, (short) 1, "ONGOING", 3);
        String v1 = "0000" + "00000000000003e8" + "0001" + str("ONGOING") + "0000000000000003";
        assertThat(written(out -> r.write(out, true))).isEqualTo(v1);
        assertThat(v1).contains("0007" + "4f4e474f494e47"); // the worked example's bytes
        assertThat(TransactionResponse.read(bufs.hex(v1), true)).isEqualTo(r);
        assertThat(written(r::write)).isEqualTo("0000" + "00000000000003e8" + "0001" + str("ONGOING"));
        assertProtocolError(() -> TransactionResponse.read(bufs.hex(v1), false), Errors.INVALID_REQUEST);
    }

    @Test
    void findCoordinatorV1KeepsTheLayoutWithKeyTypeOne() {
        FindCoordinatorRequest r = new FindCoordinatorRequest("tx", FindCoordinatorRequest.KEY_TYPE_TRANSACTION);
        assertThat(written(r::write)).isEqualTo(str("tx") + "01");
        assertThat(FindCoordinatorRequest.read(bufs.hex(str("tx") + "01"))).isEqualTo(r);
    }
}
