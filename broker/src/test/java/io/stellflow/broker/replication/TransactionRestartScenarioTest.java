package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.TransactionalProduceTest;
import io.stellflow.client.BodyReader;
import io.stellflow.client.BodyWriter;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.NetworkClient;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The LSO after brokers restart (issue #20, the checker's {@code TXN_UNREADABLE} after RESTART_ALL),
 * on three broker JVMs of a {@link FaultCluster}: a transaction writes to two partitions, every
 * broker but its coordinator is killed, so the coordinator's {@code __transaction_state} partition is
 * alone in its ISR (below {@code min.insync.replicas} 2), as the first leader after a restart of all
 * brokers often is. The End(commit) sent then is answered {@code COORDINATOR_NOT_AVAILABLE} (its
 * PREPARE_COMMIT record not committed) and the client learns nothing more. Once the brokers are back,
 * the coordinator must send the markers by itself within seconds: read_committed reads both
 * partitions' values with the LSO at the high watermark. Before the fix the transaction stayed
 * claimed in memory with nobody writing its markers, and the LSO stayed where it was until the
 * coordinator moved.
 */
@IntegrationTest
class TransactionRestartScenarioTest {
    private static final String TOPIC = "txn-restart";
    private static final String STATE = TxnWorkload.STATE_TOPIC;
    private static final String TID = "txn-restart-1";
    /** What "within seconds" means here: the claim retry (1 s) and a few marker round trips, with margin. */
    private static final long LSO_BOUND_MS = 10_000;

    private FaultCluster cluster;
    private NetworkClient network;
    private Path dir;

    @AfterEach
    void stop() throws Exception {
        if (network != null) {
            network.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (dir != null) {
            FaultCluster.deleteRecursively(dir);
        }
    }

    private <T> T send(int broker, short apiKey, BodyWriter body, BodyReader<T> reader) throws Exception {
        return network.send(cluster.address(broker), apiKey, body, reader).get(15, TimeUnit.SECONDS);
    }

    /** What a read_committed Fetch returned (the records are decoded before the buffer is released). */
    private record Read(short errorCode, long highWatermark, long lastStableOffset, List<String> values) {}

    /** A read_committed Fetch from the leader of {@code partition}; null when it cannot be had now. */
    private Read readCommitted(int partition) {
        int leader = cluster.leaderOf(TOPIC, partition);
        if (leader < 0) {
            return null;
        }
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                1 << 20,
                FetchRequest.READ_COMMITTED,
                0,
                List.of(new FetchRequest.FetchTopic(
                        TOPIC, List.of(new FetchRequest.FetchPartition(partition, -1, 0, -1L, 1 << 20)))));
        try {
            Read d = send(leader, ApiKeys.FETCH, request::write, body -> {
                FetchResponse.PartitionData pd =
                        FetchResponse.read(body).responses().get(0).partitions().get(0);
                return new Read(
                        pd.errorCode(),
                        pd.highWatermark(),
                        pd.lastStableOffset(),
                        pd.errorCode() == Errors.NONE ? TransactionalProduceTest.values(pd) : List.of());
            });
            return d.errorCode() == Errors.NONE ? d : null;
        } catch (Exception e) {
            return null; // a broker still starting: asked again
        }
    }

    @Test
    void aCommitWhosePrepareCouldNotBeCommittedIsCompletedWithinSecondsOfTheBrokersComingBack() throws Exception {
        dir = Path.of("target", "fault-scenarios", "txn-restart-" + System.currentTimeMillis())
                .toAbsolutePath();
        cluster = new FaultCluster(
                dir,
                3,
                Map.of(
                        "transaction.state.log.num.partitions", "1",
                        // No timeout abort during the test: the commit must complete, not be aborted.
                        "transaction.default.timeout.ms", "600000"));
        cluster.startAll();
        cluster.awaitUnfenced(60_000);
        Properties cp = new Properties();
        cp.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        cp.setProperty("request.timeout.ms", "10000");
        network = new NetworkClient(ClientConfig.from(cp, "txn-restart-test"));
        cluster.createTopic(TOPIC, 2, 3, Map.of("min.insync.replicas", "2"));
        FaultCluster.await(30_000, TOPIC + " led with a full ISR", () -> cluster.fullIsr(TOPIC));

        // InitProducerId creates __transaction_state (COORDINATOR_NOT_AVAILABLE meanwhile).
        InitProducerIdResponse[] init = new InitProducerIdResponse[1];
        FaultCluster.await(30_000, "InitProducerId", () -> {
            try {
                init[0] = send(
                        0,
                        ApiKeys.INIT_PRODUCER_ID,
                        new InitProducerIdRequest(TID)::write,
                        InitProducerIdResponse::read);
            } catch (Exception e) {
                return false;
            }
            return init[0].errorCode() == Errors.NONE;
        });
        long pid = init[0].producerId();
        short epoch = init[0].producerEpoch();
        FaultCluster.await(30_000, STATE + " with a full ISR", () -> cluster.fullIsr(STATE));
        int coordinator = cluster.leaderOf(STATE, 0);
        TransactionResponse begun = send(
                coordinator,
                ApiKeys.BEGIN_TRANSACTION,
                new BeginTransactionRequest(TID, pid, epoch)::write,
                TransactionResponse::read);
        assertThat(begun.errorCode()).isEqualTo(Errors.NONE);
        for (int p = 0; p < 2; p++) {
            ProduceRequest produce = TransactionalProduceTest.transactionalProduce(
                    TID, TOPIC, p, TransactionalProduceTest.batch(pid, epoch, 0, "committed-p" + p), 10_000);
            ProduceResponse r =
                    send(cluster.leaderOf(TOPIC, p), ApiKeys.PRODUCE, produce::write, ProduceResponse::read);
            assertThat(r.responses().get(0).partitions().get(0).errorCode())
                    .as("transactional produce to p" + p)
                    .isEqualTo(Errors.NONE);
        }

        List<Integer> others = new ArrayList<>();
        for (int i = 0; i < cluster.size(); i++) {
            if (i != coordinator) {
                others.add(i);
                cluster.kill9(i);
            }
        }
        FaultCluster.await(
                30_000,
                "the coordinator alone in the ISR of " + STATE + "-0",
                () -> cluster.partition(STATE, 0).isr().size() == 1);
        TransactionResponse end = send(
                coordinator,
                ApiKeys.END_TRANSACTION,
                new EndTransactionRequest(TID, pid, epoch, true)::write,
                TransactionResponse::read);
        assertThat(end.errorCode())
                .as("PREPARE_COMMIT appended, not committed (ISR below min.insync.replicas)")
                .isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);

        for (int i : others) {
            cluster.startBroker(i);
        }
        cluster.awaitUnfenced(60_000);
        FaultCluster.await(60_000, "full ISRs again", () -> cluster.fullIsr(STATE) && cluster.fullIsr(TOPIC));
        assertThat(cluster.leaderOf(STATE, 0))
                .as("the coordinator did not move (a reload would hide the bug)")
                .isEqualTo(coordinator);
        long t0 = System.nanoTime();
        String[] last = new String[2];
        boolean readable = FaultCluster.poll(LSO_BOUND_MS, () -> {
            for (int p = 0; p < 2; p++) {
                Read d = readCommitted(p);
                if (d == null) {
                    return false;
                }
                List<String> values = d.values();
                last[p] = "hw=" + d.highWatermark() + " lso=" + d.lastStableOffset() + " " + values;
                if (d.lastStableOffset() != d.highWatermark()
                        || !values.equals(List.of("1 record(s) of producer " + pid))) {
                    return false;
                }
            }
            return true;
        });
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("TXN_RESTART committed values readable " + ms + " ms after the ISRs were full");
        assertThat(readable)
                .as("read_committed reads the commit within " + LSO_BOUND_MS + " ms of the brokers' return: p0 "
                        + last[0] + ", p1 " + last[1] + "\n" + cluster.logTail(coordinator, 40))
                .isTrue();
    }
}
