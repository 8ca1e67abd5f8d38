package io.stellflow.broker;

import static io.stellflow.server.common.telemetry.PrometheusScrape.scrape;
import static io.stellflow.server.common.telemetry.PrometheusScrape.value;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.stellflow.broker.append.AgentSeams;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.server.common.telemetry.PrometheusScrape.Sample;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The thread watchdog against a real broker (issue #23): an append agent whose thread ends is
 * restarted on the same queues, and one that is stuck gets its Produces answered with an error at
 * once while the broker asks to be fenced, until it moves again. Transport-independent: nio only.
 */
@IntegrationTest
class ThreadWatchdogBrokerTest {
    private static final String TRANSPORT = "nio";
    private static final Duration DETECTED = Duration.ofSeconds(10);

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @RegisterExtension
    final LogLines lines = LogLines.of(ThreadWatchdog.class).atLevel(Level.INFO);

    @AfterEach
    void release() {
        BlockingIdleStrategy.release();
    }

    private Properties props() throws Exception {
        Properties p = TestBroker.props(NODES.dir(), TRANSPORT);
        p.setProperty("num.append.agents", "1");
        p.setProperty("broker.thread.stall.timeout.ms", "1000");
        return p;
    }

    /**
     * The agent thread's loop returns as if it had died (the test seam {@code
     * AppendAgent.endThreadForTest}): the watchdog logs THREAD_STOPPED once and starts a new thread on
     * the same queue, and the next Produce is acknowledged and reads back after the first.
     */
    @Test
    void anAgentWhoseThreadEndsIsRestartedAndItsPartitionTakesProducesAgain() throws Exception {
        StellflowServer server = NODES.start(props());
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "revived", 1);
            assertThat(Requests.produceOne(client, "revived", 0, Requests.batch(3, 1000))
                            .errorCode())
                    .isEqualTo(Errors.NONE);

            AgentSeams.endAgentThread(server.appendService(), 0);
            Wait.until(DETECTED, () -> server.watchdog().restarts() == 1, "the agent thread restarted");

            PartitionResponse after = Requests.produceOne(client, "revived", 0, Requests.batch(2, 2000));
            assertThat(after.errorCode()).isEqualTo(Errors.NONE);
            assertThat(after.baseOffset()).isEqualTo(3);
            PartitionData fetched = Requests.fetchOne(client, Requests.fetch("revived", 0, 0, 0));
            assertThat(RecordBatchReader.decode(fetched.records(), 0)).hasSize(5);

            List<Sample> samples = scrape(server.metricsPort());
            assertThat(value(samples, "stellflow_thread_restart_count_total")).isEqualTo(1.0);
            assertThat(value(samples, "stellflow_thread_alive", "thread", "sf-append-0"))
                    .isEqualTo(1.0);
        }
        assertThat(lines.messages(LogEvents.THREAD_STOPPED))
                .singleElement()
                .asString()
                .startsWith("THREAD_STOPPED thread=sf-append-0 owner=AppendService lastBeatMsAgo=");
        assertThat(lines.messages(LogEvents.THREAD_STUCK)).isEmpty();
    }

    /**
     * The agent blocks in its idle strategy ({@link BlockingIdleStrategy}): after the stall timeout
     * the watchdog logs THREAD_STUCK once, a new Produce is answered with an error at once (never left
     * waiting), Metadata is still answered, the broker gets itself fenced and the metrics show the
     * thread alive with an old heartbeat. Released, it logs THREAD_RESUMED once, the broker is
     * unfenced and Produces are acknowledged again.
     */
    @Test
    void aStuckAgentRefusesProducesFencesTheBrokerAndRecoversWhenItMovesAgain() throws Exception {
        Properties p = props();
        p.setProperty("append.idle.strategy", BlockingIdleStrategy.class.getName());
        StellflowServer server = NODES.start(p);
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "stalled", 1);
            assertThat(Requests.produceOne(client, "stalled", 0, Requests.batch(1, 1000))
                            .errorCode())
                    .isEqualTo(Errors.NONE);

            BlockingIdleStrategy.block();
            Wait.until(DETECTED, () -> server.watchdog().fenceWanted(), "THREAD_STUCK of the agent");

            long startNs = System.nanoTime();
            PartitionResponse refused = Requests.produceOne(client, "stalled", 0, Requests.batch(1, 2000));
            long answeredMs = (System.nanoTime() - startNs) / 1_000_000;
            // BROKER_NOT_AVAILABLE from the refusing agent; NOT_LEADER_OR_FOLLOWER once the fence
            // already moved leadership away (a single node leaves the partition without a leader).
            assertThat(refused.errorCode()).isIn(Errors.BROKER_NOT_AVAILABLE, Errors.NOT_LEADER_OR_FOLLOWER);
            assertThat(answeredMs).as("answered at once, not after a timeout").isLessThan(2_000);
            RawClient.Response metadata = client.call(
                    ApiKeys.METADATA,
                    Requests.nextCorrelationId(),
                    new MetadataRequest(List.of(), false, false, false));
            assertThat(metadata.errorCode()).isEqualTo(Errors.NONE);

            Wait.until(DETECTED, () -> server.lifecycle().fenced(), "the broker fenced itself");
            assertThat(server.watchdog().fenceWanted()).isTrue();
            List<Sample> samples = scrape(server.metricsPort());
            assertThat(value(samples, "stellflow_thread_alive", "thread", "sf-append-0"))
                    .isEqualTo(1.0);
            assertThat(value(samples, "stellflow_thread_heartbeat_age_milliseconds", "thread", "sf-append-0"))
                    .isGreaterThan(1_000.0);
            assertThat(value(samples, "stellflow_thread_stuck_count_total")).isEqualTo(1.0);

            BlockingIdleStrategy.release();
            Wait.until(DETECTED, () -> !server.watchdog().fenceWanted(), "THREAD_RESUMED");
            Wait.until(DETECTED, () -> !server.lifecycle().fenced(), "the broker unfenced");
            Wait.untilPasses(
                    DETECTED,
                    () -> assertThat(produceQuietly(client)).isEqualTo(Errors.NONE),
                    "a Produce acknowledged again once the partition is led here again");
            PartitionData fetched = Requests.fetchOne(client, Requests.fetch("stalled", 0, 0, 0));
            assertThat(RecordBatchReader.decode(fetched.records(), 0))
                    .as("the first and the acknowledged record; nothing refused was appended")
                    .hasSize(2);
            assertThat(value(
                            scrape(server.metricsPort()),
                            "stellflow_thread_heartbeat_age_milliseconds",
                            "thread",
                            "sf-append-0"))
                    .isLessThan(1_000.0);
        }
        assertThat(lines.messages(LogEvents.THREAD_STUCK))
                .singleElement()
                .asString()
                .startsWith("THREAD_STUCK thread=sf-append-0 owner=AppendService stalledMs=");
        assertThat(lines.messages(LogEvents.THREAD_RESUMED))
                .singleElement()
                .asString()
                .startsWith("THREAD_RESUMED thread=sf-append-0 owner=AppendService stalledMs=");
        assertThat(lines.messages(LogEvents.THREAD_STOPPED)).isEmpty();
    }

    private static short produceQuietly(RawClient client) {
        try {
            return Requests.produceOne(client, "stalled", 0, Requests.batch(1, 3000))
                    .errorCode();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
