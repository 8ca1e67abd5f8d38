package io.stellflow.broker.append;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailure;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@link Error} inside an append (a real one: a write into a mapped index page that no longer
 * exists faults, and the JVM throws {@link InternalError}) fails the requests being appended and the
 * partition, and the agent thread goes on serving its other partitions (issue #23: before, it died
 * and no Produce of its partitions was answered again).
 */
class AppendFailureTest {
    /** One index entry per batch, so every append writes into the mapped offset index. */
    private static final LogConfig EVERY_BATCH_INDEXED =
            LogConfig.builder().indexIntervalBytes(0).build();

    @TempDir
    Path dir;

    UnifiedLog brokenLog;
    UnifiedLog healthyLog;
    Partition broken;
    Partition healthy;
    EmbeddedChannel channel;
    ReadGate gate;
    AppendService service;

    @BeforeEach
    void open() throws Exception {
        brokenLog = UnifiedLog.open(dir.resolve("broken-0"), EVERY_BATCH_INDEXED);
        healthyLog = UnifiedLog.open(dir.resolve("healthy-0"), EVERY_BATCH_INDEXED);
        broken = new Partition("broken", 0, 0, brokenLog);
        healthy = new Partition("healthy", 0, 0, healthyLog);
        channel = new EmbeddedChannel();
        gate = new ReadGate(channel);
        service = new AppendService(1, "park", 16, Long.MAX_VALUE, 1 << 20); // one agent for both
        service.start();
    }

    @AfterEach
    void close() throws Exception {
        service.close();
        channel.finishAndReleaseAll();
        brokenLog.close();
        healthyLog.close();
    }

    private static ByteBuf batch(long timestampMs) {
        ByteBuf out = Unpooled.directBuffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, timestampMs);
        builder.append(timestampMs, null, new byte[100]);
        builder.close();
        return out;
    }

    private int correlationId;

    private void produce(Partition p, long timestampMs) {
        RequestContext context =
                new RequestContext(channel, RequestHeader.of(ApiKeys.PRODUCE, (short) 0, correlationId++, "t"));
        PendingProduce pending = new PendingProduce(context, new String[] {p.topic()}, new int[] {0});
        assertThat(service.submit(p, pending, 0, batch(timestampMs), false, gate))
                .isEqualTo(AppendService.QUEUED);
    }

    /** "topic:errorCode" of each response, in arrival order, waiting up to 10 s for {@code count}. */
    private List<String> answers(int count) throws InterruptedException {
        List<String> answers = new ArrayList<>();
        await(() -> {
            channel.runPendingTasks();
            ByteBuf frame;
            while ((frame = channel.readOutbound()) != null) {
                frame.skipBytes(4);
                ResponseHeader.read(frame);
                ProduceResponse.TopicResponse t =
                        ProduceResponse.read(frame).responses().get(0);
                answers.add(t.topic() + ":" + Errors.name(t.partitions().get(0).errorCode()));
                frame.release();
            }
            return answers.size() >= count;
        });
        return answers;
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition within 10 s").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /** The append agent threads of this JVM (this test's one among them). */
    private static List<Thread> agentThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("sf-append-"))
                .toList();
    }

    @Test
    void anInternalErrorInAnAppendFailsTheRequestAndThePartitionAndTheAgentServesTheOthers() throws Exception {
        produce(broken, 1000);
        produce(healthy, 1000);
        assertThat(answers(2)).containsExactlyInAnyOrder("broken:NONE", "healthy:NONE");
        List<Thread> agents = agentThreads();
        assertThat(agents).as("the agent thread").isNotEmpty();

        // Cut the mapped offset index file under the log: the next entry is written past the file's
        // end, which faults (SIGBUS) and surfaces as an InternalError inside appendAsLeader.
        try (FileChannel ch = FileChannel.open(
                dir.resolve("broken-0").resolve("00000000000000000000.index"), StandardOpenOption.WRITE)) {
            ch.truncate(0);
        }
        produce(broken, 2000);
        assertThat(answers(1)).containsExactly("broken:BROKER_NOT_AVAILABLE");
        PartitionFailure failure = broken.failure();
        assertThat(failure).as("the partition is marked failed").isNotNull();
        assertThat(failure.error()).isEqualTo(InternalError.class.getName());
        assertThat(failure.operation()).isEqualTo("append");

        // The same agent keeps serving: the healthy partition appends, the failed one is refused.
        produce(healthy, 3000);
        produce(broken, 3000);
        produce(healthy, 4000);
        assertThat(answers(3)).containsExactlyInAnyOrder("healthy:NONE", "broken:BROKER_NOT_AVAILABLE", "healthy:NONE");
        assertThat(agents).as("the agent thread survived").allMatch(Thread::isAlive);
        assertThat(healthy.logEndOffset()).isEqualTo(3);
        assertThat(healthy.failure()).isNull();
        assertThat(broken.logEndOffset())
                .as("nothing acknowledged after the fault")
                .isEqualTo(1);
    }
}
