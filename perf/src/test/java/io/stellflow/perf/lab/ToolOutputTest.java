package io.stellflow.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ToolOutputTest {

    @Test
    void parsesTheFinalLineOfKafkasProducerPerformance() {
        List<String> out = List.of(
                "42001 records sent, 8400.2 records/sec (8.20 MB/sec), 900.1 ms avg latency, 1500.0 ms max latency.",
                "65536 records sent, 14784.3 records/sec (14.44 MB/sec), 850.2 ms avg latency, 1174.0 ms max latency,"
                        + " 923 ms 50th, 1100 ms 95th, 1170 ms 99th, 1174 ms 99.9th.");
        ToolOutput.Summary s = ToolOutput.parse("kafka-producer", out, 1024);
        assertThat(s.records()).isEqualTo(65536);
        assertThat(s.bytes()).isEqualTo(65536L * 1024);
        assertThat(s.mbPerS()).isEqualTo(14.44);
        assertThat(s.p50Ms()).isEqualTo(923);
        assertThat(s.p99Ms()).isEqualTo(1170);
        assertThat(s.p999Ms()).isEqualTo(1174);
        assertThat(s.elapsedMs()).isEqualTo(Math.round(65536 / 14784.3 * 1000));
    }

    @Test
    void withWarmupRecordsTheSteadyStateSummaryOfProducerPerformanceIsTaken() {
        // Kafka 4.4.0's output with --warmup-records 100000 of --num-records 300000 (2026-12-01).
        List<String> out = List.of(
                "Warmup first 100000 records. Steady state results will print after the complete test summary.",
                "In steady state.",
                "99962 records sent, 19988.4 records/sec (19.52 MB/sec), 1.1 ms avg latency, 19.0 ms max latency.",
                "300000 records sent, 19972.039145 records/sec (19.50 MB/sec), 6.66 ms avg latency, 658.00 ms max"
                        + " latency, 1 ms 50th, 21 ms 95th, 123 ms 99th, 164 ms 99.9th.",
                "200000 steady state records sent, 19880.715706 records/sec (19.41 MB/sec), 1.00 ms avg latency,"
                        + " 19.00 ms max latency, 1 ms 50th, 3 ms 95th, 5 ms 99th, 9 ms 99.9th.");
        ToolOutput.Summary s = ToolOutput.parse("kafka-producer", out, 1024);
        assertThat(s.records()).isEqualTo(200000);
        assertThat(s.mbPerS()).isEqualTo(19.41);
        assertThat(s.p99Ms()).isEqualTo(5);
        assertThat(s.p999Ms()).isEqualTo(9);
    }

    @Test
    void aPayloadFileOfMixedSizesCountsTheRecordsRealBytesNotTheRecordSize() {
        // Kafka 4.4.0, --payload-file of JSON log lines averaging 856.6 bytes, --record-size 1024 given
        // to the lab (20261207T023212Z, zstd produce run 3).
        List<String> out = List.of("1254371 records sent, 171035.042269 records/sec (139.72 MB/sec), 8.89 ms avg"
                + " latency, 453.00 ms max latency, 8 ms 50th, 16 ms 95th, 23 ms 99th, 30 ms 99.9th.");
        ToolOutput.Summary s = ToolOutput.parse("kafka-producer", out, 1024);
        double meanBytes = (double) s.bytes() / s.records();
        assertThat(meanBytes).isBetween(856.0, 857.2);
        // what the MB/s and the bytes say about the elapsed time agrees
        assertThat(s.bytes() / LabResult.MIB / (s.elapsedMs() / 1000.0))
                .isCloseTo(139.72, org.assertj.core.api.Assertions.within(0.05));
    }

    @Test
    void usesTheFetchColumnsOfKafkasConsumerPerformance() {
        List<String> out = List.of(
                "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,"
                        + " rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec",
                "2026-11-29 12:21:00:000, 2026-11-29 12:21:03:000, 64.0000, 21.3333, 65536, 21845.3333, 1000, 2000,"
                        + " 32.0000, 32768.0000");
        ToolOutput.Summary s = ToolOutput.parse("kafka-consumer", out, 1024);
        assertThat(s.records()).isEqualTo(65536);
        assertThat(s.bytes()).isEqualTo(64L << 20);
        assertThat(s.elapsedMs()).isEqualTo(2000);
        assertThat(s.mbPerS()).isEqualTo(32.0);
        assertThat(s.p99Ms()).isEqualTo(-1);
    }

    @Test
    void readsTheLastJsonLineOfStellflowPerf() {
        List<String> out = List.of(
                "some log line",
                "{\"name\":\"x\",\"records\":10,\"bytes\":10240,\"elapsed_ms\":5,\"mb_per_s\":1.95,"
                        + "\"records_per_s\":2000.0,\"p50_ms\":1.0,\"p99_ms\":2.0,\"p999_ms\":3.0,\"max_ms\":4.0,"
                        + "\"errors\":0}");
        ToolOutput.Summary s = ToolOutput.parse("stellflow", out, 1024);
        assertThat(s.records()).isEqualTo(10);
        assertThat(s.p999Ms()).isEqualTo(3.0);
    }

    @Test
    void missingSummaryIsAnError() {
        assertThatThrownBy(() -> ToolOutput.parse("kafka-producer", List.of("nothing"), 1024))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ProducerPerformance");
    }

    @Test
    void ratiosPairMediansByCase() {
        List<LabResult> runs = List.of(
                result("stellflow", 1, 100, 2.0),
                result("stellflow", 2, 300, 4.0),
                result("stellflow", 3, 200, 3.0),
                result("kafka", 1, 100, 6.0));
        List<LabResult> medians = LabReport.medians(runs);
        assertThat(medians).hasSize(2);
        assertThat(medians.get(0).mbPerS()).isEqualTo(200);
        assertThat(medians.get(0).run()).isEqualTo(3);
        List<LabReport.Ratio> ratios = LabReport.ratios(medians);
        assertThat(ratios).singleElement().satisfies(r -> {
            assertThat(r.throughput()).isEqualTo(2.0);
            assertThat(r.p99()).isEqualTo(0.5);
            // broker 1 s/GB + client (p99 stands in) 3 vs 1 + 6
            assertThat(r.totalCpuPerGb()).isEqualTo(4.0 / 7.0, org.assertj.core.api.Assertions.within(0.001));
        });
    }

    private static LabResult result(String system, int run, double mbPerS, double p99) {
        return new LabResult(
                system, "c", run, "produce", "-", 1024, 1 << 20, 1, "1", "false", 1, 1, 1, mbPerS, 1, 1, p99, p99, 1, 1,
                p99, p99, 0);
    }
}
