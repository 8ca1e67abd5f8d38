package io.stellflow.perf.lab;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.geom.Line2D;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.AxisLocation;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.CategoryItemRendererState;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.CategoryDataset;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * One grouped bar chart drawn by JFreeChart into a PNG: a group of bars per case, one bar per
 * system in the system's fixed colour ({@link #colour}), the median's value printed beside each
 * bar, a min-max whisker over the runs ({@link WhiskerBarRenderer}), and a linear or a log-10 value
 * axis. The bars are horizontal, one case a row with its name on the left, so that the matrix's
 * 108 cases make a taller image (about 40 px a case) instead of an unreadable width or rotated
 * names. A value that was not measured is {@code NaN} and has no bar. Stateless; needs {@code
 * java.awt.headless=true} on a machine without a display.
 */
final class BarChart {
    /** Bars of one system: per category, the median, the smallest and the largest run (NaN: none). */
    record Series(String system, double[] median, double[] min, double[] max) {}

    /**
     * @param title first line of the chart
     * @param subtitle second line (what the bars and whiskers are)
     * @param unit the value axis title, with its unit
     * @param logScale a log-10 value axis (latencies); linear from zero otherwise
     */
    record Spec(
            String title,
            String subtitle,
            String unit,
            boolean logScale,
            List<String> categories,
            List<Series> series) {}

    /** Stellflow blue and Kafka orange (a pair colour-blind readers tell apart), then the rest. */
    static final Color STELLFLOW = new Color(0x1F5FAF);

    static final Color KAFKA = new Color(0xE07B00);
    private static final Color[] OTHERS = {
        new Color(0x3A9D5D), new Color(0x8E5EA2), new Color(0x7F7F7F), new Color(0xC44E52), new Color(0x17A2B8)
    };

    /** Whiskers and value labels. */
    static final Color INK = new Color(0x222222);

    // Layout in pixels: a 15 px bar holds the 11 px value font; two systems and the gap between
    // cases make 42 px a case, 4,700 px for the matrix's 108 cases.
    static final int WIDTH_PX = 1200;
    static final int BAR_PX = 15;
    static final int CASE_GAP_PX = 12;
    private static final int CHROME_PX = 190;
    private static final int MIN_HEIGHT_PX = 420;
    // More cases than this repeat the value axis above the bars: the bottom one is far away.
    private static final int AXIS_ON_TOP_CASES = 12;
    // Space right of the highest whisker for its label, as a share of the axis.
    private static final double LABEL_ROOM = 0.15;

    private BarChart() {}

    /** A system's colour, the same on every chart: fixed for ours and Kafka, by name for others. */
    static Color colour(String system) {
        return switch (system) {
            case "stellflow" -> STELLFLOW;
            case "kafka" -> KAFKA;
            default -> OTHERS[Math.floorMod(system.hashCode(), OTHERS.length)];
        };
    }

    /** The image height for {@code cases} cases of {@code systems} bars each (pixels). */
    static int heightPx(int cases, int systems) {
        return Math.max(MIN_HEIGHT_PX, CHROME_PX + cases * (systems * BAR_PX + CASE_GAP_PX));
    }

    /** Draws {@code spec} and writes it to {@code file} (through a temporary file and a rename). */
    static void write(Spec spec, Path file) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        ChartUtils.saveChartAsPNG(
                tmp.toFile(),
                chart(spec),
                WIDTH_PX,
                heightPx(spec.categories().size(), spec.series().size()));
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The chart of {@code spec}: a horizontal {@link CategoryPlot}, a row (series) per system. */
    static JFreeChart chart(Spec spec) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        int systems = spec.series().size();
        double[][] min = new double[systems][];
        double[][] max = new double[systems][];
        for (int s = 0; s < systems; s++) {
            Series series = spec.series().get(s);
            min[s] = series.min();
            max[s] = series.max();
            for (int c = 0; c < spec.categories().size(); c++) {
                double v = series.median()[c];
                data.addValue(
                        Double.isNaN(v) ? null : v,
                        series.system(),
                        spec.categories().get(c));
            }
        }

        WhiskerBarRenderer renderer = new WhiskerBarRenderer(min, max);
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        renderer.setDrawBarOutline(false);
        renderer.setItemMargin(0.02);
        for (int s = 0; s < systems; s++) {
            renderer.setSeriesPaint(s, colour(spec.series().get(s).system()));
        }
        renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}", new ValueFormat()));
        renderer.setDefaultItemLabelsVisible(true);
        renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        renderer.setDefaultItemLabelPaint(INK);
        renderer.setDefaultPositiveItemLabelPosition(
                new ItemLabelPosition(ItemLabelAnchor.OUTSIDE3, TextAnchor.CENTER_LEFT));
        renderer.setItemLabelAnchorOffset(4);

        CategoryAxis cases = new CategoryAxis();
        cases.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        cases.setMaximumCategoryLabelWidthRatio(0.3f);
        // 8 px before the first case and after the last; a chart of few cases, stretched to the
        // minimum height, centres them in that height rather than drawing 60 px bars.
        int n = spec.categories().size();
        double dataPx = heightPx(n, systems) - CHROME_PX;
        double marginPx = 8 + (dataPx - n * (systems * BAR_PX + CASE_GAP_PX)) / 2;
        cases.setLowerMargin(marginPx / dataPx);
        cases.setUpperMargin(marginPx / dataPx);
        cases.setCategoryMargin((n - 1) * CASE_GAP_PX / dataPx);

        String unit = spec.unit() + (spec.logScale() ? " (log scale)" : "");
        ValueAxis values = valueAxis(spec, unit);
        CategoryPlot plot = new CategoryPlot(data, cases, values, renderer);
        plot.setOrientation(PlotOrientation.HORIZONTAL);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(0xBBBBBB));
        plot.setRangeMinorGridlinesVisible(spec.logScale());
        plot.setRangeMinorGridlinePaint(new Color(0xE4E4E4));
        plot.setOutlineVisible(false);
        // On a horizontal plot BOTTOM_OR_* is the bottom edge, TOP_OR_* the top one.
        plot.setRangeAxisLocation(0, AxisLocation.BOTTOM_OR_LEFT);
        if (spec.categories().size() > AXIS_ON_TOP_CASES) {
            plot.setRangeAxis(1, valueAxis(spec, unit));
            plot.setRangeAxisLocation(1, AxisLocation.TOP_OR_LEFT);
        }

        JFreeChart chart = new JFreeChart(spec.title(), new Font(Font.SANS_SERIF, Font.BOLD, 17), plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        chart.setPadding(new RectangleInsets(8, 8, 8, 16));
        chart.addSubtitle(0, new TextTitle(spec.subtitle(), new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
        LegendTitle legend = chart.getLegend();
        legend.setPosition(RectangleEdge.TOP);
        legend.setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        return chart;
    }

    /**
     * The value axis with a fixed range: from zero (linear) or the decade below the smallest value
     * (log) to the highest whisker plus {@link #LABEL_ROOM} for its label.
     */
    private static ValueAxis valueAxis(Spec spec, String label) {
        double hi = 0;
        double minPositive = Double.POSITIVE_INFINITY;
        for (Series s : spec.series()) {
            for (double[] a : new double[][] {s.median(), s.min(), s.max()}) {
                for (double v : a) {
                    if (!Double.isNaN(v) && v > 0) {
                        hi = Math.max(hi, v);
                        minPositive = Math.min(minPositive, v);
                    }
                }
            }
        }
        if (hi == 0) {
            hi = 1;
            minPositive = 1;
        }
        DecimalFormat ticks = new DecimalFormat("#,##0.###", DecimalFormatSymbols.getInstance(Locale.ROOT));
        Font font = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
        if (spec.logScale()) {
            double loExp = Math.floor(Math.log10(minPositive));
            double hiExp = Math.log10(hi);
            // Past the next decade, so that two ticks are labelled (the axis takes a tick at 10^3
            // as beyond an upper bound of exactly 1000: its log(1000) / log(10) is 2.9999999999999996).
            double upperExp = Math.max(loExp + 1.02, hiExp + (hiExp - loExp) * LABEL_ROOM / (1 - LABEL_ROOM));
            LogAxis axis = new LogAxis(label);
            axis.setBase(10);
            axis.setSmallestValue(Math.pow(10, loExp));
            axis.setRange(Math.pow(10, loExp), Math.pow(10, upperExp));
            // A labelled tick each decade, a gridline at 2..9 times it.
            axis.setTickUnit(new NumberTickUnit(1, ticks, 9), false, false);
            axis.setAutoTickUnitSelection(false, false);
            axis.setNumberFormatOverride(ticks);
            axis.setMinorTickMarksVisible(true);
            axis.setTickLabelFont(font);
            return axis;
        }
        NumberAxis axis = new NumberAxis(label);
        axis.setRange(0, hi / (1 - LABEL_ROOM));
        axis.setNumberFormatOverride(ticks);
        axis.setTickLabelFont(font);
        return axis;
    }

    /**
     * A {@link BarRenderer} that also draws each bar's min-max whisker, which may be asymmetric
     * around the bar's end (the library's error-bar renderers take a symmetric deviation), and
     * places the value label past the whisker's far end rather than over it. The bar itself, its
     * geometry and its label are the library's. Thread-safety: confined to the thread drawing the
     * chart.
     */
    static final class WhiskerBarRenderer extends BarRenderer {
        private static final long serialVersionUID = 1L;
        private static final double CAP_HALF_PX = 4;

        private final double[][] min;
        private final double[][] max;
        // The far end of the item being drawn (Java2D), read by drawItemLabel; NaN: no whisker.
        private double whiskerEndPx = Double.NaN;

        /** {@code min[series][category]} and {@code max[series][category]}: NaN for none. */
        WhiskerBarRenderer(double[][] min, double[][] max) {
            this.min = min;
            this.max = max;
        }

        /** The whisker of an item as {@code {min, max}}, or null when it has none (a single run). */
        double[] whisker(int row, int column) {
            double lo = min[row][column];
            double hi = max[row][column];
            if (Double.isNaN(lo) || Double.isNaN(hi) || !(hi > lo)) {
                return null;
            }
            return new double[] {lo, hi};
        }

        @Override
        public void drawItem(
                Graphics2D g2,
                CategoryItemRendererState state,
                Rectangle2D dataArea,
                CategoryPlot plot,
                CategoryAxis domainAxis,
                ValueAxis rangeAxis,
                CategoryDataset dataset,
                int row,
                int column,
                int pass) {
            double[] w = dataset.getValue(row, column) == null ? null : whisker(row, column);
            int visibleRow = state.getVisibleSeriesIndex(row);
            // The whisker's values must be on the axis (a log axis has no zero).
            double lo = w == null ? Double.NaN : Math.max(w[0], rangeAxis.getLowerBound());
            double hi = w == null ? Double.NaN : Math.min(w[1], rangeAxis.getUpperBound());
            RectangleEdge edge = plot.getRangeAxisEdge();
            whiskerEndPx = w == null || visibleRow < 0 ? Double.NaN : rangeAxis.valueToJava2D(hi, dataArea, edge);
            super.drawItem(g2, state, dataArea, plot, domainAxis, rangeAxis, dataset, row, column, pass);
            if (Double.isNaN(whiskerEndPx)) {
                return;
            }
            PlotOrientation orientation = plot.getOrientation();
            double mid = calculateBarW0(plot, orientation, dataArea, domainAxis, state, visibleRow, column)
                    + state.getBarWidth() / 2;
            double loPx = rangeAxis.valueToJava2D(lo, dataArea, edge);
            double hiPx = whiskerEndPx;
            g2.setPaint(INK);
            g2.setStroke(new BasicStroke(1.5f));
            if (orientation == PlotOrientation.HORIZONTAL) {
                g2.draw(new Line2D.Double(loPx, mid, hiPx, mid));
                g2.draw(new Line2D.Double(loPx, mid - CAP_HALF_PX, loPx, mid + CAP_HALF_PX));
                g2.draw(new Line2D.Double(hiPx, mid - CAP_HALF_PX, hiPx, mid + CAP_HALF_PX));
            } else {
                g2.draw(new Line2D.Double(mid, loPx, mid, hiPx));
                g2.draw(new Line2D.Double(mid - CAP_HALF_PX, loPx, mid + CAP_HALF_PX, loPx));
                g2.draw(new Line2D.Double(mid - CAP_HALF_PX, hiPx, mid + CAP_HALF_PX, hiPx));
            }
            whiskerEndPx = Double.NaN;
        }

        @Override
        protected void drawItemLabel(
                Graphics2D g2,
                CategoryDataset data,
                int row,
                int column,
                CategoryPlot plot,
                org.jfree.chart.labels.CategoryItemLabelGenerator generator,
                Rectangle2D bar,
                boolean negative) {
            Rectangle2D withWhisker = bar;
            if (!Double.isNaN(whiskerEndPx)) {
                withWhisker = (Rectangle2D) bar.clone();
                if (plot.getOrientation() == PlotOrientation.HORIZONTAL) {
                    withWhisker.add(whiskerEndPx, bar.getCenterY());
                } else {
                    withWhisker.add(bar.getCenterX(), whiskerEndPx);
                }
            }
            super.drawItemLabel(g2, data, row, column, plot, generator, withWhisker, negative);
        }
    }

    /** {@link #format} as the {@link NumberFormat} the label generator takes. */
    private static final class ValueFormat extends NumberFormat {
        private static final long serialVersionUID = 1L;

        @Override
        public StringBuffer format(double number, StringBuffer to, FieldPosition pos) {
            return to.append(BarChart.format(number));
        }

        @Override
        public StringBuffer format(long number, StringBuffer to, FieldPosition pos) {
            return to.append(BarChart.format(number));
        }

        @Override
        public Number parse(String source, ParsePosition pos) {
            throw new UnsupportedOperationException("labels are only written");
        }
    }

    /**
     * A value label: three significant digits, all of a whole number up to a million (with
     * thousands separators), millions as {@code 1.23M}.
     */
    static String format(double v) {
        double a = Math.abs(v);
        if (a >= 1_000_000) {
            return String.format(Locale.ROOT, "%.2fM", v / 1e6);
        }
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 100 || a == 0) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (a >= 0.1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }
}
