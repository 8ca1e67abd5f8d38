package io.stellflow.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.util.ArrayList;
import java.util.List;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BarChartTest {
    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    private static final double NAN = Double.NaN;

    private static BarChart.Spec spec(boolean logScale, List<String> cases, BarChart.Series... series) {
        return new BarChart.Spec("title", "subtitle", "MB/s", logScale, cases, List.of(series));
    }

    @Test
    void valueLabelsKeepThreeSignificantDigitsAndWholeNumbers() {
        assertThat(BarChart.format(619.372)).isEqualTo("619");
        assertThat(BarChart.format(40_373)).isEqualTo("40,373");
        assertThat(BarChart.format(634_237.064)).isEqualTo("634,237");
        assertThat(BarChart.format(1_234_567)).isEqualTo("1.23M");
        assertThat(BarChart.format(11.04)).isEqualTo("11.0");
        assertThat(BarChart.format(4.531)).isEqualTo("4.53");
        assertThat(BarChart.format(0.0123)).isEqualTo("0.0123");
        assertThat(BarChart.format(0)).isEqualTo("0");
    }

    @Test
    void eachBarIsLabelledWithItsMedianAndColouredByItsSystem() {
        JFreeChart chart = BarChart.chart(spec(
                false,
                List.of("a", "b"),
                new BarChart.Series("kafka", new double[] {634_237.064, 5}, new double[2], new double[2]),
                new BarChart.Series("stellflow", new double[] {NAN, 4.531}, new double[2], new double[2])));
        CategoryPlot plot = chart.getCategoryPlot();
        BarChart.WhiskerBarRenderer r = (BarChart.WhiskerBarRenderer) plot.getRenderer();

        assertThat(r.getDefaultItemLabelsVisible()).isTrue();
        assertThat(r.getDefaultItemLabelGenerator().generateLabel(plot.getDataset(), 0, 0))
                .isEqualTo("634,237");
        assertThat(r.getDefaultItemLabelGenerator().generateLabel(plot.getDataset(), 1, 1))
                .isEqualTo("4.53");
        // A value not measured has no bar (and so no label).
        assertThat(plot.getDataset().getValue(1, 0)).isNull();
        // Kafka's colour although it is the first series here.
        assertThat(r.getSeriesPaint(0)).isEqualTo(BarChart.KAFKA);
        assertThat(r.getSeriesPaint(1)).isEqualTo(BarChart.STELLFLOW);
        assertThat(BarChart.colour("redpanda"))
                .isEqualTo(BarChart.colour("redpanda"))
                .isNotIn(BarChart.STELLFLOW, BarChart.KAFKA);
    }

    @Test
    void latencyIsOnALogAxisThatHoldsEveryWhisker() {
        BarChart.Series s = new BarChart.Series(
                "stellflow", new double[] {4.5, 300}, new double[] {4.1, 250}, new double[] {6.0, 900});
        CategoryPlot log = BarChart.chart(spec(true, List.of("a", "b"), s)).getCategoryPlot();
        CategoryPlot linear = BarChart.chart(spec(false, List.of("a", "b"), s)).getCategoryPlot();

        assertThat(log.getRangeAxis()).isInstanceOf(LogAxis.class);
        assertThat(log.getRangeAxis().getLowerBound()).isEqualTo(1.0);
        assertThat(log.getRangeAxis().getUpperBound()).isGreaterThan(900);
        // A single value still gets two labelled decades: 100 and 1,000 around 357.
        LogAxis one = (LogAxis) BarChart.chart(spec(
                        true,
                        List.of("a"),
                        new BarChart.Series("stellflow", new double[] {357}, new double[] {NAN}, new double[] {NAN})))
                .getCategoryPlot()
                .getRangeAxis();
        assertThat(one.getLowerBound()).isEqualTo(100.0);
        assertThat(Math.log10(one.getUpperBound())).isGreaterThan(3.0);
        assertThat(linear.getRangeAxis()).isInstanceOf(NumberAxis.class);
        assertThat(linear.getRangeAxis().getLowerBound()).isZero();
        assertThat(linear.getRangeAxis().getUpperBound()).isGreaterThan(900);
    }

    @Test
    void aWhiskerIsTheLowestAndHighestRunAndNoneForASingleRun() {
        BarChart.Series s = new BarChart.Series(
                "stellflow", new double[] {100, 50, NAN}, new double[] {90, 50, NAN}, new double[] {200, 50, NAN});
        BarChart.WhiskerBarRenderer r =
                (BarChart.WhiskerBarRenderer) BarChart.chart(spec(false, List.of("a", "b", "c"), s))
                        .getCategoryPlot()
                        .getRenderer();

        assertThat(r.whisker(0, 0)).containsExactly(90, 200);
        assertThat(r.whisker(0, 1)).isNull();
        assertThat(r.whisker(0, 2)).isNull();
    }

    @Test
    void theDrawnWhiskerReachesFromTheLowestToTheHighestRun() {
        // Linear axis 0..235 (200 plus room for the label): the whisker goes 10 below the bar's
        // end and 100 beyond it.
        BarChart.Series s = new BarChart.Series("stellflow", new double[] {100}, new double[] {90}, new double[] {200});
        BufferedImage img = BarChart.chart(spec(false, List.of("produce"), s))
                .createBufferedImage(BarChart.WIDTH_PX, BarChart.heightPx(1, 1));
        int blue = BarChart.STELLFLOW.getRGB() & 0xFFFFFF;

        // The bar: the longest run of our blue in a row (the legend's swatch is a few pixels).
        int barTop = -1;
        int barBottom = -1;
        int barLeft = 0;
        int barRight = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            int[] run = longestRun(img, y, blue);
            if (run[1] - run[0] > 100) {
                if (barTop < 0) {
                    barTop = y;
                    barLeft = run[0];
                    barRight = run[1];
                }
                barBottom = y;
            }
        }
        assertThat(barTop).as("a bar was drawn").isPositive();
        // The whisker: the dark run across the bar's end on its middle row.
        int mid = (barTop + barBottom) / 2;
        int from = barRight;
        while (dark(img.getRGB(from - 1, mid))) {
            from--;
        }
        int to = barRight;
        while (dark(img.getRGB(to + 1, mid))) {
            to++;
        }
        double perUnitPx = (barRight - barLeft + 1) / 100.0;

        assertThat((barRight - from) / perUnitPx).isBetween(8.0, 12.0);
        assertThat((to - barRight) / perUnitPx).isBetween(97.0, 103.0);
    }

    @Test
    void manyCasesMakeATallerChartOfTheSameWidthNotNarrowerBars() {
        List<String> cases = new ArrayList<>();
        double[] v = new double[108];
        for (int i = 0; i < v.length; i++) {
            cases.add("produce-1KiB-p" + i + "-acks1-epoll");
            v[i] = 100 + i;
        }
        BarChart.Series ours = new BarChart.Series("stellflow", v, v, v);
        BarChart.Series kafka = new BarChart.Series("kafka", v, v, v);
        JFreeChart many = BarChart.chart(spec(false, cases, ours, kafka));

        assertThat(many.getCategoryPlot().getOrientation()).isEqualTo(PlotOrientation.HORIZONTAL);
        // The value axis is repeated above the bars of a tall chart.
        assertThat(many.getCategoryPlot().getRangeAxisCount()).isEqualTo(2);
        int perCasePx = BarChart.heightPx(108, 2) - BarChart.heightPx(107, 2);
        assertThat(perCasePx).isEqualTo(2 * BarChart.BAR_PX + BarChart.CASE_GAP_PX);
        assertThat(BarChart.heightPx(2, 2)).isLessThan(BarChart.heightPx(108, 2));
        BufferedImage img = many.createBufferedImage(BarChart.WIDTH_PX, BarChart.heightPx(108, 2));
        int blue = BarChart.STELLFLOW.getRGB() & 0xFFFFFF;
        int barRows = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            if (longestRun(img, y, blue)[1] - longestRun(img, y, blue)[0] > 50) {
                barRows++;
            }
        }
        // 108 bars of ours, each at least 12 px thick: the 11 px label fits.
        assertThat(barRows).isGreaterThanOrEqualTo(108 * 12);
    }

    /** {from, to} of the longest run of {@code rgb} in row {@code y}; {0, 0} when none. */
    private static int[] longestRun(BufferedImage img, int y, int rgb) {
        int best = 0;
        int bestFrom = 0;
        int from = -1;
        for (int x = 0; x <= img.getWidth(); x++) {
            boolean in = x < img.getWidth() && (img.getRGB(x, y) & 0xFFFFFF) == rgb;
            if (in && from < 0) {
                from = x;
            } else if (!in && from >= 0) {
                if (x - from > best) {
                    best = x - from;
                    bestFrom = from;
                }
                from = -1;
            }
        }
        return new int[] {bestFrom, bestFrom + Math.max(0, best - 1)};
    }

    private static boolean dark(int argb) {
        int r = (argb >> 16) & 0xFF;
        int g = (argb >> 8) & 0xFF;
        int b = argb & 0xFF;
        return r < 110 && g < 110 && b < 110;
    }
}
