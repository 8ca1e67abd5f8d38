package io.stellflow.perf.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The "Transactions" section of {@code results.md} (issue #20; cases of {@code
 * perf/lab-transactions.sh}, {@code TxnBench}): transactional produce throughput per system and
 * Stellflow over Kafka, each system's transactional over idempotent produce, and each system's
 * consume-transform-produce latency with and without transactions and their ratio (the overhead).
 * Targets of the issue: transactional throughput at least 1.5x Kafka's; our overhead ratio below
 * Kafka's. Works on medians ({@link LabReport#medians}); stateless.
 */
final class TxnReport {
    /** Transactional produce cases: {@code txn-produce-<size>-<boundary>}. */
    static final String TXN_PRODUCE = "txn-produce-";
    /** The idempotent baseline of the same loop: {@code idem-produce-<size>}, paired by record size. */
    static final String IDEM_PRODUCE = "idem-produce-";
    /** Consume-transform-produce with transactions; its baseline replaces the prefix with {@link #CTP_PLAIN}. */
    static final String CTP_TXN = "ctp-latency-txn";

    static final String CTP_PLAIN = "ctp-latency-plain";

    private TxnReport() {}

    static void section(StringBuilder sb, List<LabResult> medians) {
        List<LabResult> produce = medians.stream()
                .filter(m ->
                        m.caseName().startsWith(TXN_PRODUCE) || m.caseName().startsWith(IDEM_PRODUCE))
                .toList();
        List<String> ctp = ctpRows(medians);
        if (produce.isEmpty() && ctp.isEmpty()) {
            return;
        }
        sb.append("\n## Transactions (medians; issue #20's targets: transactional throughput at least 1.5x"
                + " Kafka's, our consume-transform-produce overhead txn / plain below Kafka's)\n");
        if (!produce.isEmpty()) {
            sb.append("\n| case | Stellflow MB/s | Kafka MB/s | Stellflow / Kafka | Stellflow commit p50 / p99 ms |"
                    + " Kafka commit p50 / p99 ms | Stellflow txn / idem | Kafka txn / idem |\n"
                    + "|---|---:|---:|---:|---:|---:|---:|---:|\n");
            List<String> names = produce.stream()
                    .map(LabResult::caseName)
                    .distinct()
                    .sorted()
                    .toList();
            for (String name : names) {
                LabResult s = find(medians, "stellflow", name);
                LabResult k = find(medians, "kafka", name);
                sb.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
                        name,
                        s == null ? "n/a" : LabReport.fmt(s.mbPerS()),
                        k == null ? "n/a" : LabReport.fmt(k.mbPerS()),
                        s == null || k == null ? "n/a" : LabReport.opt(LabReport.ratio(s.mbPerS(), k.mbPerS())),
                        commitLatency(s),
                        commitLatency(k),
                        LabReport.opt(overIdempotent(medians, s)),
                        LabReport.opt(overIdempotent(medians, k))));
            }
        }
        if (!ctp.isEmpty()) {
            sb.append("\n| system | case | plain p50 ms | plain p99 ms | txn p50 ms | txn p99 ms | txn p99.9 ms |"
                    + " overhead p50 (txn / plain) | overhead p99 |\n"
                    + "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
            ctp.forEach(sb::append);
        }
    }

    /**
     * A transactional produce case's MB/s over its system's idempotent case of the same record size,
     * -1 for a baseline case itself, a missing case or a missing baseline.
     */
    static double overIdempotent(List<LabResult> medians, LabResult txn) {
        if (txn == null || !txn.caseName().startsWith(TXN_PRODUCE)) {
            return -1;
        }
        return medians.stream()
                .filter(m -> m.system().equals(txn.system())
                        && m.caseName().startsWith(IDEM_PRODUCE)
                        && m.recordSize() == txn.recordSize())
                .findFirst()
                .map(idem -> LabReport.ratio(txn.mbPerS(), idem.mbPerS()))
                .orElse(-1.0);
    }

    /** One row per system and {@link #CTP_TXN} case that has its {@link #CTP_PLAIN} twin. */
    static List<String> ctpRows(List<LabResult> medians) {
        List<String> rows = new ArrayList<>();
        for (LabResult txn : medians) {
            if (!txn.caseName().startsWith(CTP_TXN)) {
                continue;
            }
            String suffix = txn.caseName().substring(CTP_TXN.length());
            LabResult plain = find(medians, txn.system(), CTP_PLAIN + suffix);
            if (plain == null) {
                continue;
            }
            rows.add(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    txn.system(),
                    "ctp-latency" + suffix,
                    LabReport.opt(plain.p50Ms()),
                    LabReport.opt(plain.p99Ms()),
                    LabReport.opt(txn.p50Ms()),
                    LabReport.opt(txn.p99Ms()),
                    LabReport.opt(txn.p999Ms()),
                    LabReport.opt(LabReport.ratio(txn.p50Ms(), plain.p50Ms())),
                    LabReport.opt(LabReport.ratio(txn.p99Ms(), plain.p99Ms()))));
        }
        rows.sort(null);
        return rows;
    }

    private static String commitLatency(LabResult r) {
        return r == null || r.p50Ms() < 0 ? "n/a" : LabReport.opt(r.p50Ms()) + " / " + LabReport.opt(r.p99Ms());
    }

    private static LabResult find(List<LabResult> medians, String system, String caseName) {
        for (LabResult m : medians) {
            if (m.system().equals(system) && m.caseName().equals(caseName)) {
                return m;
            }
        }
        return null;
    }
}
