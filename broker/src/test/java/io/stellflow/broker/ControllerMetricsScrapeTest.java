package io.stellflow.broker;

import static io.stellflow.server.common.telemetry.PrometheusScrape.scrape;
import static io.stellflow.server.common.telemetry.PrometheusScrape.scrapeOrEmpty;
import static io.stellflow.server.common.telemetry.PrometheusScrape.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.server.common.telemetry.MetricsDictionary;
import io.stellflow.server.common.telemetry.PrometheusScrape;
import io.stellflow.server.common.telemetry.PrometheusScrape.Sample;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The "Controller" instruments of the metrics dictionary as Prometheus scrapes them over HTTP from a
 * combined node (the broker's endpoint, {@code metrics.port}); a controller-only node's own endpoint
 * is the controller module's {@code ControllerNodeTest}. Names, Prometheus types, units (OpenMetrics
 * {@code # UNIT}) and labels are checked against every row of the dictionary's Controller table.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class ControllerMetricsScrapeTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$", Pattern.MULTILINE);
    private static final Pattern UNIT = Pattern.compile("^# UNIT (\\S+) (\\S+)$", Pattern.MULTILINE);

    @TempDir
    Path dir;

    @Test
    void aCombinedNodeExportsEveryControllerInstrumentOnTheBrokerEndpoint() throws Exception {
        Properties p = new Properties();
        p.setProperty("node.id", "4");
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        TestTransports.assumeSelected(transport);
        p.setProperty("transport", transport);
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        // a snapshot within the first few entries, so the restart below loads one (replay latency)
        p.setProperty("metadata.snapshot.interval.entries", "2");
        p.setProperty("metrics.port", "0");
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(p))) {
            // The producer id block fetched at join is a controller command on its own thread:
            // counted before the baseline, never between it and the topic's creation.
            Wait.until(WAIT, server::holdsProducerIds, "the producer id block fetched at join");
            List<Sample> before = scrape(server.metricsPort());
            assertThat(value(before, "stellflow_controller_active", "node_id", "4"))
                    .isEqualTo(1);
            assertThat(value(before, "stellflow_controller_election_count_total"))
                    .isEqualTo(1);
            assertThat(value(before, "stellflow_controller_epoch")).isGreaterThanOrEqualTo(1);
            assertThat(value(before, "stellflow_broker_registered_count")).isEqualTo(1);
            assertThat(value(before, "stellflow_broker_fenced_count")).isZero();
            assertThat(value(before, "stellflow_unclean_election_count_total")).isZero();
            double commands = value(before, "stellflow_controller_command_count_total", "result", "success");
            double appends = value(before, "stellflow_metadata_log_append_latency_milliseconds_count");
            double deltas = value(before, "stellflow_metadata_delta_broadcast_count_total");
            assertThat(commands).as("the broker's registration and unfencing").isGreaterThanOrEqualTo(2);
            assertThat(deltas).as("the broker follows the metadata").isGreaterThanOrEqualTo(1);

            Properties client = new Properties();
            client.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
            try (StellflowAdmin admin = new StellflowAdmin(client)) {
                admin.createTopic("metered", 2);
            }
            List<Sample> after = scrape(server.metricsPort());
            assertThat(value(after, "stellflow_controller_command_count_total", "result", "success"))
                    .isEqualTo(commands + 1);
            assertThat(value(after, "stellflow_controller_command_latency_milliseconds_count", "result", "success"))
                    .isEqualTo(commands + 1);
            assertThat(value(after, "stellflow_controller_command_count_total", "result", "error"))
                    .isZero();
            assertThat(value(after, "stellflow_metadata_log_append_latency_milliseconds_count"))
                    .isEqualTo(appends + 1);
            Wait.untilPasses(
                    WAIT,
                    () -> assertThat(value(
                                    scrapeOrEmpty(server.metricsPort()),
                                    "stellflow_metadata_delta_broadcast_count_total"))
                            .isGreaterThan(deltas),
                    "the topic's delta sent to the broker");
            Wait.until(WAIT, () -> hasSnapshot(dir.resolve("data-metadata")), "a metadata snapshot");
        }
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(p))) {
            String text = PrometheusScrape.fetch(server.metricsPort(), "text/plain");
            List<Sample> samples = PrometheusScrape.parse(text);
            assertThat(value(samples, "stellflow_metadata_log_replay_latency_milliseconds_count"))
                    .as("the restart loaded the snapshot")
                    .isGreaterThanOrEqualTo(1);
            assertThat(value(samples, "stellflow_controller_active")).isEqualTo(1);
            matchesTheDictionary(text, PrometheusScrape.fetch(server.metricsPort(), OPENMETRICS), "4");
        }
    }

    /**
     * Every row of the Controller table is exported under its Prometheus name with its type, unit and
     * exactly its labels ({@code le} on buckets); the scope labels and forbidden labels are absent.
     */
    private static void matchesTheDictionary(String text, String openMetrics, String nodeId) throws IOException {
        Map<String, String> types = new HashMap<>();
        for (Matcher m = TYPE.matcher(openMetrics); m.find(); ) {
            types.put(m.group(1), m.group(2));
        }
        Map<String, String> units = new HashMap<>();
        for (Matcher m = UNIT.matcher(openMetrics); m.find(); ) {
            units.put(m.group(1), m.group(2));
        }
        List<Sample> samples = PrometheusScrape.parse(text);
        int rows = 0;
        for (MetricsDictionary.Row row : MetricsDictionary.load().values()) {
            if (!row.section().equals("Controller")) {
                continue;
            }
            rows++;
            String family = PrometheusScrape.family(row);
            assertThat(types.get(family)).as(row.name()).isEqualTo(row.kind());
            assertThat(units.get(family)).as(row.name()).isEqualTo(row.unit().equals("ms") ? "milliseconds" : null);
            Set<String> expectedLabels = new HashSet<>();
            for (String a : row.attributes()) {
                expectedLabels.add(a.replace('.', '_'));
            }
            List<String> names = PrometheusScrape.sampleNames(row);
            for (String name : names) {
                List<Sample> series =
                        samples.stream().filter(s -> s.name().equals(name)).toList();
                assertThat(series).as(name).isNotEmpty();
                for (Sample s : series) {
                    Set<String> labels = new HashSet<>(s.labels().keySet());
                    if (name.endsWith("_bucket")) {
                        assertThat(labels.remove("le")).as(name).isTrue();
                    }
                    assertThat(labels).as(name + " " + s.labels()).isEqualTo(expectedLabels);
                    assertThat(s.labels()).as(name).containsEntry("node_id", nodeId);
                }
            }
            if (row.attributes().contains("result")) {
                assertThat(samples.stream()
                                .filter(s -> s.name().equals(names.get(names.size() - 1)))
                                .map(s -> s.labels().get("result")))
                        .as(row.name() + " results")
                        .isSubsetOf("success", "error", "timeout")
                        .contains("success");
            }
        }
        assertThat(rows).isEqualTo(13);
    }

    /** Whether Ratis wrote a snapshot ({@code <metadata.log.dir>/<group>/sm/snapshot.<term>_<index>}). */
    private static boolean hasSnapshot(Path metadataDir) {
        try (Stream<Path> found = Files.find(
                metadataDir,
                3,
                (f, attrs) ->
                        attrs.isRegularFile() && f.getFileName().toString().startsWith("snapshot."))) {
            return found.findAny().isPresent();
        } catch (IOException | UncheckedIOException e) {
            return false; // not created yet, or a file purged during the search
        }
    }
}
