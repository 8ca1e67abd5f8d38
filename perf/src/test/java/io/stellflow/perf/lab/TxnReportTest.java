package io.stellflow.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class TxnReportTest {
    private static LabResult r(String system, String name, String kind, double mbPerS, double p50, double p99) {
        return new LabResult(
                system,
                name,
                1,
                kind,
                "-",
                1024,
                1 << 20,
                1,
                "-1",
                "true",
                1000,
                1 << 30,
                1000,
                mbPerS,
                mbPerS * 1024,
                p50,
                p99,
                p99 * 2,
                1.0,
                1.0,
                0.5,
                0.5,
                0);
    }

    private static final List<LabResult> RUNS = List.of(
            r("stellflow", "txn-produce-1KiB-100ms", "produce", 600, 4, 9),
            r("kafka", "txn-produce-1KiB-100ms", "produce", 300, 12, 40),
            r("stellflow", "idem-produce-1KiB", "produce", 640, -1, -1),
            r("kafka", "idem-produce-1KiB", "produce", 400, -1, -1),
            r("stellflow", "ctp-latency-txn", "latency", 2, 3.0, 6.0),
            r("stellflow", "ctp-latency-plain", "latency", 2, 1.0, 2.0),
            r("kafka", "ctp-latency-txn", "latency", 2, 12.6, 30.0),
            r("kafka", "ctp-latency-plain", "latency", 2, 2.0, 5.0));

    @Test
    void transactionalProduceIsComparedAcrossSystemsAndWithItsIdempotentBaseline() {
        List<LabResult> medians = LabReport.medians(RUNS);
        LabResult ours = medians.stream()
                .filter(m -> m.system().equals("stellflow") && m.caseName().equals("txn-produce-1KiB-100ms"))
                .findFirst()
                .orElseThrow();
        assertThat(TxnReport.overIdempotent(medians, ours)).isEqualTo(0.938); // 600 / 640
        LabResult baseline = medians.stream()
                .filter(m -> m.caseName().equals("idem-produce-1KiB"))
                .findFirst()
                .orElseThrow();
        assertThat(TxnReport.overIdempotent(medians, baseline)).isEqualTo(-1);

        StringBuilder sb = new StringBuilder();
        TxnReport.section(sb, medians);
        assertThat(sb.toString())
                .contains("## Transactions")
                .contains(
                        "| txn-produce-1KiB-100ms | 600.0 | 300.0 | 2.00 | 4.00 / 9.00 | 12.00 / 40.00 | 0.94 | 0.75 |")
                .contains("| idem-produce-1KiB | 640.0 | 400.0 | 1.60 | n/a | n/a | n/a | n/a |");
    }

    @Test
    void ctpLatencyIsPairedWithItsPlainTwinPerSystemAsAnOverheadRatio() {
        List<String> rows = TxnReport.ctpRows(LabReport.medians(RUNS));
        assertThat(rows)
                .containsExactly(
                        "| kafka | ctp-latency | 2.00 | 5.00 | 12.60 | 30.00 | 60.00 | 6.30 | 6.00 |\n",
                        "| stellflow | ctp-latency | 1.00 | 2.00 | 3.00 | 6.00 | 12.00 | 3.00 | 3.00 |\n");
    }

    @Test
    void aRunWithoutTransactionalCasesHasNoSectionAndAMissingTwinNoRow() {
        StringBuilder sb = new StringBuilder();
        TxnReport.section(sb, LabReport.medians(List.of(r("stellflow", "produce-1KiB", "produce", 600, 1, 2))));
        assertThat(sb).isEmpty();
        assertThat(TxnReport.ctpRows(LabReport.medians(List.of(r("kafka", "ctp-latency-txn", "latency", 2, 3, 6)))))
                .isEmpty();
    }

    @Test
    void theSectionIsPartOfResultsMarkdown() {
        List<LabResult> medians = LabReport.medians(RUNS);
        String md = LabReport.markdown("note", new LabReport.Limits(0, 0), medians, LabReport.ratios(medians));
        assertThat(md).contains("## Transactions").contains("| stellflow | ctp-latency |");
    }
}
