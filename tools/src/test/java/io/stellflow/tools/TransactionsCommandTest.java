package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.transaction.TransactionCoordinator;
import io.stellflow.broker.transaction.TransactionPartition;
import io.stellflow.broker.transaction.TransactionStateMachine.InitResult;
import io.stellflow.broker.transaction.TransactionStateMachine.TxnResult;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeProducersResponse.Producer;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-transactions.sh} on a real broker: a live transaction (opened at the coordinator,
 * its partition registered and a batch appended) is listed, described and not called hanging; a
 * transaction the coordinator never knew (a BEGIN and a batch appended through the Partition API for
 * a producer id it has no record of) pins the last stable offset, is found by {@code find-hanging}
 * only past {@code --max-transaction-timeout}, and {@code abort --start-offset} moves the LSO to the
 * high watermark. Then the refusals: an unknown id, an abort of a closed transaction, of a
 * transaction its coordinator still has open (unless {@code --force}), an unreachable broker (exit 1
 * within seconds).
 */
@IntegrationTest
class TransactionsCommandTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    /** A producer id no coordinator handed out (blocks start at 0 and grow by 1000). */
    private static final long FORGOTTEN_PID = 987_654_321L;

    private static ToolRun run(String... args) {
        return ToolRun.run(Tools.commandLine(new TransactionsCommand()), args);
    }

    /** {@code abort --topic T --partition P --start-offset O} and {@code extra} flags. */
    private static ToolRun abortAt(String bootstrap, String topic, int partition, long startOffset, String... extra) {
        String[] args = {
            "--bootstrap-server",
            bootstrap,
            "abort",
            "--topic",
            topic,
            "--partition",
            "" + partition,
            "--start-offset",
            "" + startOffset
        };
        return run(concat(args, extra));
    }

    @Test
    void listsDescribesFindsHangingAndAbortsOnARealBroker(@TempDir Path dir) throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String bootstrap = "127.0.0.1:" + server.port();
            Properties c = new Properties();
            c.setProperty("bootstrap.servers", bootstrap);
            try (StellflowAdmin admin = new StellflowAdmin(c)) {
                admin.createTopic("orders", 2);
            }
            Wait.until(WAIT, () -> server.replicaManager().hostedPartition("orders", 1) != null, "orders hosted");
            Partition live = server.replicaManager().hostedPartition("orders", 0);
            Partition forgotten = server.replicaManager().hostedPartition("orders", 1);

            // A live transaction, as the Produce path drives it: Init, Begin, register, append.
            TransactionCoordinator coordinator = server.transactionCoordinator();
            AtomicReference<InitResult> inited = new AtomicReference<>();
            Wait.until(
                    WAIT,
                    () -> {
                        try {
                            InitResult r = coordinator
                                    .initProducerId("tx-live", () -> true)
                                    .get(10, TimeUnit.SECONDS);
                            inited.set(r);
                            return r.errorCode() == Errors.NONE;
                        } catch (Exception e) {
                            return false; // __transaction_state being created or loaded
                        }
                    },
                    "InitProducerId tx-live");
            // A second InitProducerId bumps the epoch, so that an older epoch (>= 0, as the tool
            // requires) can be shown refused by the partition's leader below.
            InitResult init = coordinator.initProducerId("tx-live", () -> true).get(10, TimeUnit.SECONDS);
            assertThat(init.errorCode()).isEqualTo(Errors.NONE);
            assertThat(init.producerEpoch()).isGreaterThan(inited.get().producerEpoch());
            TxnResult begin = coordinator
                    .beginTransaction("tx-live", init.producerId(), init.producerEpoch(), () -> true)
                    .get(10, TimeUnit.SECONDS);
            assertThat(begin.errorCode()).isEqualTo(Errors.NONE);
            TxnResult reg = coordinator
                    .registerPartition(
                            "tx-live",
                            init.producerId(),
                            init.producerEpoch(),
                            begin.transactionSequence(),
                            new TransactionPartition("orders", 0))
                    .get(10, TimeUnit.SECONDS);
            assertThat(reg.errorCode()).isEqualTo(Errors.NONE);
            append(live, init.producerId(), init.producerEpoch(), reg.transactionSequence(), "live");

            // A transaction the coordinator never knew: it pins orders-1's LSO at its BEGIN.
            append(forgotten, FORGOTTEN_PID, (short) 3, 5, "stuck");
            long begun = 0;
            assertThat(forgotten.lastStableOffset()).isEqualTo(begun);
            assertThat(forgotten.highWatermark()).isEqualTo(2);

            ToolRun list = run("--bootstrap-server", bootstrap, "list");
            assertThat(list.exit()).as(list.err()).isZero();
            assertThat(list.out())
                    .contains("TRANSACTIONAL-ID", "PRODUCER-ID", "TRANSACTION-STATE")
                    .containsPattern("tx-live +" + init.producerId() + " +Ongoing");
            // A bootstrap list with a port nobody listens on, first or last, and the flag after the
            // subcommand: each run is a fresh client whose random first pick may be the dead port.
            for (int i = 0; i < 6; i++) {
                String withDead = i % 2 == 0 ? "127.0.0.1:1," + bootstrap : bootstrap + ",127.0.0.1:1";
                ToolRun again = run("list", "--bootstrap-server", withDead);
                assertThat(again.exit()).as(withDead + ": " + again.err()).isZero();
                assertThat(again.out()).containsPattern("tx-live +" + init.producerId() + " +Ongoing");
            }

            ToolRun describe = run("--bootstrap-server", bootstrap, "describe", "--transactional-id", "tx-live");
            assertThat(describe.exit()).as(describe.err()).isZero();
            assertThat(describe.out())
                    .containsPattern("tx-live +" + init.producerId() + " +" + init.producerEpoch() + " +Ongoing +"
                            + begin.transactionSequence() + " +60000 +\\d+ +\\d+ +orders-0");

            ToolRun producers =
                    run("--bootstrap-server", bootstrap, "describe-producers", "--topic", "orders", "--partition", "1");
            assertThat(producers.exit()).as(producers.err()).isZero();
            assertThat(producers.out()).containsPattern(FORGOTTEN_PID + " +3 +0 +\\d+ +-1 +0 +5");

            // Younger than the default 15 minutes: nothing; with 0 minutes only the forgotten one
            // (tx-live's coordinator lists orders-0).
            ToolRun young = run("--bootstrap-server", bootstrap, "find-hanging", "--topic", "orders");
            assertThat(young.exit()).as(young.err()).isZero();
            assertThat(young.out().strip().lines()).hasSize(1); // the header
            ToolRun hanging = run(
                    "--bootstrap-server",
                    bootstrap,
                    "find-hanging",
                    "--broker-id",
                    "" + server.brokerId(),
                    "--max-transaction-timeout",
                    "0");
            assertThat(hanging.exit()).as(hanging.err()).isZero();
            assertThat(hanging.out().strip().lines()).hasSize(2);
            assertThat(hanging.out()).containsPattern("orders +1 +" + FORGOTTEN_PID + " +3 +-1 +0 ");

            ToolRun abort = abortAt(bootstrap, "orders", 1, 0);
            assertThat(abort.exit()).as(abort.err()).isZero();
            assertThat(abort.out())
                    .isEqualTo("Aborted the transaction of producer " + FORGOTTEN_PID
                            + " (epoch 3) in orders-1 starting at offset 0\n");
            assertThat(forgotten.highWatermark()).isEqualTo(3); // BEGIN, batch, ABORT
            assertThat(forgotten.lastStableOffset()).isEqualTo(forgotten.highWatermark());
            assertThat(live.lastStableOffset()).isZero(); // the live transaction is untouched

            ToolRun after = run(
                    "--bootstrap-server",
                    bootstrap,
                    "find-hanging",
                    "--topic",
                    "orders",
                    "--max-transaction-timeout",
                    "0");
            assertThat(after.out().strip().lines()).hasSize(1);

            // Refusals: one line, exit 1.
            ToolRun again = run(
                    "--bootstrap-server",
                    bootstrap,
                    "abort",
                    "--topic",
                    "orders",
                    "--partition",
                    "1",
                    "--producer-id",
                    "" + FORGOTTEN_PID,
                    "--producer-epoch",
                    "3",
                    "--coordinator-epoch",
                    "0");
            assertThat(again.exit()).isEqualTo(1);
            assertThat(again.err())
                    .isEqualTo("error: producer " + FORGOTTEN_PID + " has no open transaction in orders-1;"
                            + " describe-producers shows the open ones\n");
            // tx-live's coordinator has it ongoing with orders-0: refused before anything is sent;
            // forced, the leader still refuses the older epoch.
            String[] olderEpoch = {
                "--bootstrap-server",
                bootstrap,
                "abort",
                "--topic",
                "orders",
                "--partition",
                "0",
                "--producer-id",
                "" + init.producerId(),
                "--producer-epoch",
                "" + (init.producerEpoch() - 1),
                "--coordinator-epoch",
                "0"
            };
            ToolRun live0 = run(olderEpoch);
            assertThat(live0.exit()).isEqualTo(1);
            assertThat(live0.err())
                    .startsWith("error: transactional id 'tx-live' still has producer " + init.producerId()
                            + "'s transaction in orders-0 at its coordinator: state Ongoing started at ");
            ToolRun fenced = run(concat(olderEpoch, "--force"));
            assertThat(fenced.exit()).isEqualTo(1);
            assertThat(fenced.err())
                    .startsWith("error: abort of producer " + init.producerId()
                            + " in orders-0 refused: INVALID_PRODUCER_EPOCH");
            assertThat(live.lastStableOffset()).isZero();
            ToolRun unknown = run("--bootstrap-server", bootstrap, "describe", "--transactional-id", "nope");
            assertThat(unknown.exit()).isEqualTo(1);
            assertThat(unknown.err())
                    .isEqualTo("error: transactional id 'nope' does not exist at its coordinator;"
                            + " list shows the ids\n");
            ToolRun noTopic = run("--bootstrap-server", bootstrap, "find-hanging", "--topic", "missing");
            assertThat(noTopic.exit()).isEqualTo(1);
            assertThat(noTopic.err()).isEqualTo("error: topic missing does not exist\n");
        }
    }

    /**
     * The reviewer's case: {@code abort --start-offset} of a transaction its producer still has open
     * (Ongoing at the coordinator with the partition) used to write the marker, after which the
     * producer's commit was acknowledged but read_committed never saw its record. Now it is refused
     * and writes nothing, the producer commits and the record is read; with {@code --force} the marker
     * is written while the coordinator still has the transaction open.
     */
    @Test
    void anAbortOfATransactionItsCoordinatorHasOpenIsRefusedUnlessForced(@TempDir Path dir) throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String bootstrap = "127.0.0.1:" + server.port();
            Properties c = new Properties();
            c.setProperty("bootstrap.servers", bootstrap);
            TopicPartition tp = new TopicPartition("payments", 0);
            try (StellflowAdmin admin = new StellflowAdmin(c)) {
                admin.createTopic("payments", 1);
                Wait.until(WAIT, () -> server.replicaManager().hostedPartition("payments", 0) != null, "hosted");
                Partition partition = server.replicaManager().hostedPartition("payments", 0);
                Properties p = new Properties();
                p.putAll(c);
                p.setProperty("transactional.id", "tx-pay");
                p.setProperty("transaction.timeout.ms", "60000");
                p.setProperty("max.block.ms", "30000");
                try (StellflowProducer producer = new StellflowProducer(p)) {
                    producer.initTransactions();
                    producer.beginTransaction();
                    producer.send(new ProducerRecord("payments", 0, null, bytes("kept")))
                            .get(15, TimeUnit.SECONDS);
                    Producer open = openTransaction(admin, tp);
                    long hw = partition.highWatermark();
                    ToolRun refused = abortAt(bootstrap, "payments", 0, open.currentTxnStartOffset());
                    assertThat(refused.exit()).as(refused.out()).isEqualTo(1);
                    assertThat(refused.out()).isEmpty();
                    assertThat(refused.err().lines()).hasSize(1);
                    assertThat(refused.err())
                            .startsWith("error: transactional id 'tx-pay' still has producer " + open.producerId()
                                    + "'s transaction in payments-0 at its coordinator: state Ongoing started at ")
                            .contains("timeout 60000 ms; committing or aborting it belongs to its producer")
                            .endsWith("nothing written (run with --force if you know the producer is gone)\n");
                    assertThat(partition.highWatermark()).isEqualTo(hw);
                    producer.commitTransaction();

                    producer.beginTransaction();
                    producer.send(new ProducerRecord("payments", 0, null, bytes("forced")))
                            .get(15, TimeUnit.SECONDS);
                    Producer second = openTransaction(admin, tp);
                    ToolRun forced = abortAt(bootstrap, "payments", 0, second.currentTxnStartOffset(), "--force");
                    assertThat(forced.exit()).as(forced.err()).isZero();
                    assertThat(forced.out())
                            .isEqualTo("Aborted the transaction of producer " + second.producerId() + " (epoch "
                                    + second.producerEpoch() + ") in payments-0 starting at offset "
                                    + second.currentTxnStartOffset() + "\n");
                    assertThat(partition.lastStableOffset()).isEqualTo(partition.highWatermark());
                    assertThat(admin.transactions()
                                    .describeTransactions(List.of("tx-pay"))
                                    .get(0)
                                    .state())
                            .isEqualTo("Ongoing"); // the coordinator still had it: what --force is for
                }
            }
            // read_committed: the committed record; the forced one aborted.
            Properties rc = new Properties();
            rc.putAll(c);
            rc.setProperty("isolation.level", "read_committed");
            rc.setProperty("fetch.max.wait.ms", "50");
            List<String> values = new ArrayList<>();
            try (StellflowConsumer consumer = new StellflowConsumer(rc)) {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                long end =
                        server.replicaManager().hostedPartition("payments", 0).highWatermark();
                Wait.until(
                        WAIT,
                        () -> {
                            for (ConsumerRecord r : consumer.poll(Duration.ofMillis(100))) {
                                values.add(new String(r.value(), StandardCharsets.UTF_8));
                            }
                            return consumer.position(tp) >= end;
                        },
                        "read_committed to the high watermark");
            }
            assertThat(values).containsExactly("kept");
        }
    }

    /** The one open transaction of {@code tp} in its leader's producer state. */
    private static Producer openTransaction(StellflowAdmin admin, TopicPartition tp) {
        List<Producer> open = admin.transactions().describeProducers(List.of(tp)).get(tp).producers().stream()
                .filter(s -> s.currentTxnStartOffset() >= 0)
                .toList();
        assertThat(open).hasSize(1);
        return open.get(0);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String[] concat(String[] args, String... more) {
        String[] out = java.util.Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, out, args.length, more.length);
        return out;
    }

    @Test
    void anUnreachableBrokerFailsWithinSecondsAndSaysWhy() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String bootstrap = "127.0.0.1:" + port;
        long startNs = System.nanoTime();
        ToolRun r = run("--bootstrap-server", bootstrap, "list");
        long ms = (System.nanoTime() - startNs) / 1_000_000;
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .startsWith("error: cannot reach the cluster at " + bootstrap)
                .contains("check --bootstrap-server");
        assertThat(ms).as("took %d ms", ms).isLessThan(10_000);
    }

    /** Appends one transactional batch of {@code pid} (a BEGIN marker first when none is open). */
    private static void append(Partition partition, long pid, short epoch, long txnSequence, String value)
            throws Exception {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
            b.append(1_000, null, value.getBytes(StandardCharsets.UTF_8));
            b.close();
            RecordBatchLayout.setProducerFields(out, 0, pid, epoch, 0);
            assertThat(partition.appendTransactionalAsLeader(out, null, txnSequence))
                    .isNotNegative();
        } finally {
            out.release();
        }
    }
}
