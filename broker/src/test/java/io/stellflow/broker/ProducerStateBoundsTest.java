package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker-wide bounds of issue #20 over the wire on one in-process node: {@code
 * producer.id.max.per.broker} (a new producer id's first Produce answered BROKER_NOT_AVAILABLE, known
 * ones go on, expiry frees room) and {@code transactional.id.max.per.broker} (InitProducerId for a new
 * transactional id answered COORDINATOR_NOT_AVAILABLE, known ids go on, expiry frees room).
 */
@IntegrationTest
class ProducerStateBoundsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private static InitProducerIdResponse init(RawClient c, String transactionalId) throws IOException {
        RawClient.Response r = c.call(
                ApiKeys.INIT_PRODUCER_ID, Requests.nextCorrelationId(), new InitProducerIdRequest(transactionalId));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return InitProducerIdResponse.read(r.body());
    }

    /** InitProducerId, retried while the coordinator (or the controller's id block) is not ready. */
    private static InitProducerIdResponse awaitInit(RawClient c, String transactionalId) {
        InitProducerIdResponse[] last = new InitProducerIdResponse[1];
        Wait.until(
                WAIT,
                () -> {
                    try {
                        last[0] = init(c, transactionalId);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                    assertThat(last[0].errorCode()).isIn(Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE);
                    return last[0].errorCode() == Errors.NONE;
                },
                "InitProducerId of " + transactionalId);
        return last[0];
    }

    /** One idempotent batch of one record, as the Go SDK sends it. */
    private static byte[] batch(long producerId, short epoch, int sequence) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
        b.append(1_000, null, ("v" + sequence).getBytes(StandardCharsets.UTF_8));
        b.close();
        out.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, producerId);
        out.setShort(RecordBatchLayout.PRODUCER_EPOCH_OFFSET, epoch);
        out.setInt(RecordBatchLayout.BASE_SEQUENCE_OFFSET, sequence);
        out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    private static short produce(RawClient c, int partition, InitProducerIdResponse p, int sequence)
            throws IOException {
        return Requests.produceOne(c, "bounded", partition, batch(p.producerId(), p.producerEpoch(), sequence))
                .errorCode();
    }

    @Test
    void aNewProducerIdBeyondTheBrokerBoundIsRefusedRetriablyUntilIdsExpire() throws Exception {
        Properties props = TestBroker.props(dir, "nio");
        props.setProperty("producer.id.max.per.partition", "10");
        props.setProperty("producer.id.max.per.broker", "2");
        props.setProperty("producer.id.expiration.ms", "4000");
        props.setProperty("log.retention.check.interval.ms", "200");
        try (StellflowServer server = TestBroker.start(props);
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, "bounded", 2);
            Wait.until(
                    WAIT,
                    () -> {
                        Partition p0 = TestBroker.partition(server, "bounded", 0);
                        Partition p1 = TestBroker.partition(server, "bounded", 1);
                        return p0 != null && p0.isLeader() && p1 != null && p1.isLeader();
                    },
                    "bounded led");
            InitProducerIdResponse a = awaitInit(c, null);
            InitProducerIdResponse b = awaitInit(c, null);
            InitProducerIdResponse n = awaitInit(c, null);
            assertThat(produce(c, 0, a, 0)).isEqualTo(Errors.NONE);
            assertThat(produce(c, 1, b, 0)).isEqualTo(Errors.NONE);

            // Two ids on the broker, one per partition (each far below its own bound of 10).
            assertThat(produce(c, 0, n, 0)).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
            assertThat(produce(c, 1, n, 0)).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
            assertThat(produce(c, 0, a, 1)).as("known producers go on").isEqualTo(Errors.NONE);
            assertThat(produce(c, 1, b, 1)).isEqualTo(Errors.NONE);
            assertThat(TestBroker.partition(server, "bounded", 0).log().logEndOffset())
                    .as("the refused batch was not written")
                    .isEqualTo(2);

            // Idle for producer.id.expiration.ms, a and b are expired by the retention check: n fits.
            Wait.until(
                    WAIT,
                    () -> {
                        short code;
                        try {
                            code = produce(c, 1, n, 0);
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                        assertThat(code).isIn(Errors.NONE, Errors.BROKER_NOT_AVAILABLE);
                        return code == Errors.NONE;
                    },
                    "the new producer admitted after expiry");
        }
    }

    @Test
    void aNewTransactionalIdBeyondTheBrokerBoundIsRefusedRetriablyUntilIdsExpire() throws Exception {
        Properties props = TestBroker.props(dir, "nio");
        props.setProperty("transaction.state.log.num.partitions", "1");
        props.setProperty("transactional.id.max.per.broker", "1");
        props.setProperty("transactional.id.expiration.ms", "4000");
        props.setProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "200");
        try (StellflowServer server = TestBroker.start(props);
                RawClient c = new RawClient(server.port())) {
            InitProducerIdResponse first = awaitInit(c, "tx-a");
            assertThat(first.producerEpoch()).isZero();

            assertThat(init(c, "tx-b").errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
            assertThat(server.transactionCoordinator()
                            .describeTransaction("tx-b")
                            .get())
                    .as("nothing stored for the refused id")
                    .isNull();
            InitProducerIdResponse again = init(c, "tx-a");
            assertThat(again.errorCode()).as("a known id goes on").isEqualTo(Errors.NONE);
            assertThat(again.producerEpoch()).isEqualTo((short) 1);
            assertThat(server.transactionCoordinator().transactionalIds()).isEqualTo(1);

            // Idle for transactional.id.expiration.ms, tx-a is deleted by the coordinator's sweep.
            InitProducerIdResponse b = awaitInit(c, "tx-b");
            assertThat(b.producerEpoch()).isZero();
            assertThat(server.transactionCoordinator()
                            .describeTransaction("tx-a")
                            .get())
                    .isNull();
        }
    }
}
