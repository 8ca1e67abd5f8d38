package io.stellflow.perf.lab;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * PNG charts of a lab run with XChart: {@code throughput.png} (median MB/s per case, one series per
 * system) and {@code latency.png} (median p50/p99/p99.9 per case and system). Stateless; needs
 * {@code java.awt.headless=true} on a machine without a display.
 */
final class Charts {
    private Charts() {}

    static void write(Path outDir, List<LabResult> medians) throws IOException {
        if (medians.isEmpty()) {
            return;
        }
        Set<String> systems = new LinkedHashSet<>();
        Set<String> cases = new LinkedHashSet<>();
        for (LabResult m : medians) {
            systems.add(m.system());
            cases.add(m.caseName());
        }
        List<String> caseList = new ArrayList<>(cases);
        CategoryChart tp = chart("Throughput per case (median)", "MB/s", caseList.size());
        for (String system : systems) {
            List<Double> y = new ArrayList<>();
            for (String c : caseList) {
                y.add(
                        find(medians, system, c) == null
                                ? 0.0
                                : find(medians, system, c).mbPerS());
            }
            tp.addSeries(system, caseList, y);
        }
        BitmapEncoder.saveBitmap(tp, outDir.resolve("throughput.png").toString(), BitmapEncoder.BitmapFormat.PNG);

        List<String> latencyCases = new ArrayList<>();
        for (String c : caseList) {
            for (String system : systems) {
                LabResult m = find(medians, system, c);
                if (m != null && m.p99Ms() >= 0) {
                    latencyCases.add(system + " " + c);
                }
            }
        }
        if (latencyCases.isEmpty()) {
            return;
        }
        CategoryChart lat = chart("Latency percentiles (median over runs)", "ms", latencyCases.size());
        String[] names = {"p50", "p99", "p99.9"};
        for (int p = 0; p < 3; p++) {
            List<Double> y = new ArrayList<>();
            for (String label : latencyCases) {
                int space = label.indexOf(' ');
                LabResult m = find(medians, label.substring(0, space), label.substring(space + 1));
                y.add(p == 0 ? m.p50Ms() : p == 1 ? m.p99Ms() : m.p999Ms());
            }
            lat.addSeries(names[p], latencyCases, y);
        }
        BitmapEncoder.saveBitmap(lat, outDir.resolve("latency.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static CategoryChart chart(String title, String yTitle, int categories) {
        CategoryChart c = new CategoryChartBuilder()
                .width(Math.max(900, 60 * categories))
                .height(600)
                .title(title)
                .yAxisTitle(yTitle)
                .build();
        c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        c.getStyler().setXAxisLabelRotation(60);
        c.getStyler().setOverlapped(false);
        return c;
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
