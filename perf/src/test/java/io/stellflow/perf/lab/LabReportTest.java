package io.stellflow.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class LabReportTest {
    private static LabResult result(
            String system, String name, String kind, long elapsedMs, double mbPerS, double recPerS, double p99) {
        return new LabResult(
                system, name, 1, kind, "-", 0, 0, 1, "-", "-", 900, 0, elapsedMs, mbPerS, recPerS, -1, p99, -1, 1.0, -1,
                1.0, -1, 0);
    }

    @Test
    void rebalanceCasesCompareTheirTimeToStable() {
        List<LabReport.Ratio> ratios = LabReport.ratios(LabReport.medians(List.of(
                result("stellflow", "rebalance-10x900-join", "rebalance", 400, 0, 0, -1),
                result("kafka", "rebalance-10x900-join", "rebalance", 5000, 0, 0, -1))));

        assertThat(ratios).singleElement().satisfies(r -> {
            assertThat(r.time()).isEqualTo(0.08);
            assertThat(r.throughput()).isEqualTo(-1);
        });
    }

    @Test
    void commitCasesCompareCommitsPerSecondAndLatency() {
        List<LabReport.Ratio> ratios = LabReport.ratios(LabReport.medians(List.of(
                result("stellflow", "commit-8", "commit", 10_000, 0, 30_000, 2.0),
                result("kafka", "commit-8", "commit", 10_000, 0, 10_000, 8.0))));

        assertThat(ratios).singleElement().satisfies(r -> {
            assertThat(r.throughput()).isEqualTo(3.0);
            assertThat(r.p99()).isEqualTo(0.25);
            assertThat(r.time()).isEqualTo(-1);
        });
    }

    @Test
    void byteMovingCasesStillCompareMegabytesPerSecond() {
        List<LabReport.Ratio> ratios = LabReport.ratios(LabReport.medians(List.of(
                result("stellflow", "consume-group-1KiB-p8", "consume", 1000, 800, 819_200, -1),
                result("kafka", "consume-group-1KiB-p8", "consume", 2000, 400, 409_600, -1))));

        assertThat(ratios)
                .singleElement()
                .satisfies(r -> assertThat(r.throughput()).isEqualTo(2.0));
    }

    @Test
    void theMarkdownPairsEachSystemsGroupConsumeWithItsAssignConsume() {
        List<LabResult> medians = LabReport.medians(List.of(
                result("stellflow", "consume-group-1KiB-p8", "consume", 1000, 760, 0, -1),
                result("stellflow", "consume-assign-1KiB-p8", "consume", 1000, 800, 0, -1),
                result("kafka", "consume-group-1KiB-p8", "consume", 1000, 400, 0, -1)));
        String md = LabReport.markdown("note", new LabReport.Limits(0, 0), medians, LabReport.ratios(medians));

        assertThat(md)
                .contains("## Group against assign consume (medians, MB/s)")
                .contains("| stellflow | 1KiB-p8 | 760.0 | 800.0 | 0.95 |")
                .doesNotContain("| kafka | 1KiB-p8 |");
    }

    @Test
    void theMarkdownShowsGroupCasesInTheirOwnUnits() {
        List<LabResult> medians = LabReport.medians(List.of(
                result("stellflow", "rebalance-3x30-join", "rebalance", 123, 0, 0, -1),
                result("kafka", "rebalance-3x30-join", "rebalance", 4567, 0, 0, -1),
                result("stellflow", "commit-2", "commit", 3000, 0, 2500, 1.5)));
        String md = LabReport.markdown("note", new LabReport.Limits(0, 0), medians, LabReport.ratios(medians));

        assertThat(md)
                .contains("## Consumer groups (medians)")
                .contains("| stellflow | rebalance-3x30-join | 1 | 123 |")
                .contains("| kafka | rebalance-3x30-join | 1 | 4567 |")
                .contains("| stellflow | commit-2 | 1 |  | 2500 |")
                .contains("rebalance time |")
                .contains("| rebalance-3x30-join | n/a | n/a | n/a | n/a | n/a | 0.03 |");
    }

    private static LabResult produce(String system, String name, String idempotence, double mbPerS, double cpuPerGb) {
        return produce(system, name, 1, idempotence, mbPerS, cpuPerGb);
    }

    private static LabResult produce(
            String system, String name, int run, String idempotence, double mbPerS, double cpuPerGb) {
        return new LabResult(
                system,
                name,
                run,
                "produce",
                "nio",
                1024,
                1 << 20,
                1,
                "-1",
                idempotence,
                1000,
                1 << 30,
                1000,
                mbPerS,
                mbPerS * 1024,
                1,
                2,
                3,
                cpuPerGb,
                cpuPerGb,
                0.5,
                0.5,
                0);
    }

    @Test
    void eachRunsIdempotentPairIsReportedBesideTheMedians() {
        String on = "produce-1KiB-b1MiB-acks-1";
        String off = on + "-noidem";
        List<LabResult> runs = List.of(
                produce("stellflow", on, 1, "true", 450, 1),
                produce("stellflow", off, 1, "false", 500, 1),
                produce("stellflow", on, 2, "true", 500, 1),
                produce("stellflow", off, 2, "false", 400, 1),
                produce("stellflow", on, 3, "true", 490, 1),
                produce("stellflow", off, 3, "false", 500, 1),
                // Run 4 lost its non-idempotent case: not paired.
                produce("stellflow", on, 4, "true", 100, 1),
                produce("kafka", on, 1, "true", 300, 1));
        List<LabResult> medians = LabReport.medians(runs);

        assertThat(LabReport.pairedThroughputRatios(runs, "stellflow", on, off)).containsExactly(0.9, 1.25, 0.98);
        assertThat(LabReport.pairedThroughputRatios(runs, "kafka", on, off)).isEmpty();
        String md = LabReport.markdown("note", new LabReport.Limits(0, 0), medians, List.of(), runs);
        assertThat(md)
                .contains("- stellflow produce-1KiB-b1MiB-acks-1, each run's idempotent / non-idempotent"
                        + " throughput, in run order: 0.90, 1.25, 0.98; median 0.98, 1 of 3 below 0.97\n")
                .doesNotContain("- kafka produce-1KiB-b1MiB-acks-1, each run's");
        // Without the runs, only the table of medians.
        assertThat(LabReport.markdown("note", new LabReport.Limits(0, 0), medians, List.of()))
                .contains("## Idempotent / non-idempotent produce")
                .doesNotContain("each run's idempotent");
    }

    @Test
    void theMarkdownShowsEachCasesIdempotenceAndPairsItWithItsNonIdempotentTwin() {
        List<LabResult> medians = LabReport.medians(List.of(
                produce("stellflow", "produce-1KiB-b1MiB-acks-1", "true", 600, 0.5),
                produce("stellflow", "produce-1KiB-b1MiB-acks-1-noidem", "false", 610, 0.49),
                produce("kafka", "produce-1KiB-b1MiB-acks-1", "true", 290, 1.0),
                produce("kafka", "produce-1KiB-b1MiB-acks-1-noidem", "false", 300, 0.8),
                produce("kafka", "produce-16KiB-b1MiB-acks-1-noidem", "false", 400, 0.8),
                result("stellflow", "consume-1KiB", "consume", 1000, 800, 0, -1)));
        String md = LabReport.markdown("note", new LabReport.Limits(0, 0), medians, LabReport.ratios(medians));

        assertThat(md)
                .contains("| system | case | transport | idempotence | runs |")
                .contains("| stellflow | produce-1KiB-b1MiB-acks-1 | nio | true | 1 | 600.0 |")
                .contains("| stellflow | produce-1KiB-b1MiB-acks-1-noidem | nio | false | 1 | 610.0 |")
                .contains("| stellflow | consume-1KiB | - | - | 1 | 800.0 |")
                .contains("## Idempotent / non-idempotent produce")
                .contains("| stellflow | produce-1KiB-b1MiB-acks-1 | 600.0 | 610.0 | 0.98 | 1.00 | 1.02 | 1.01 |")
                .contains("| kafka | produce-1KiB-b1MiB-acks-1 | 290.0 | 300.0 | 0.97 | 1.00 | 1.25 | 1.15 |")
                // A non-idempotent case without its idempotent twin is in the main table only.
                .doesNotContain("| kafka | produce-16KiB-b1MiB-acks-1 |");
        // The Stellflow / Kafka table keeps comparing each case across systems.
        assertThat(LabReport.ratios(medians))
                .extracting(LabReport.Ratio::caseName)
                .containsExactly("produce-1KiB-b1MiB-acks-1", "produce-1KiB-b1MiB-acks-1-noidem");
    }
}
