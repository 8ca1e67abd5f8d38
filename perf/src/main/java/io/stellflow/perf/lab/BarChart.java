package io.stellflow.perf.lab;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * One grouped bar chart drawn with Java2D into a PNG: a group of bars per case, one bar per system
 * in the system's fixed colour ({@link #colour}), the median's value printed above each bar, a
 * min-max whisker over the runs, and a linear or a log-10 value axis. A value that was not measured
 * is {@code NaN} and prints {@code n/a} instead of a bar. Stateless; needs {@code
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

    // Layout in pixels: a bar 60 wide fits a seven-character label ("634,237") in the 12 px font.
    private static final int BAR_PX = 60;
    private static final int BAR_GAP_PX = 6;
    private static final int GROUP_GAP_PX = 40;
    private static final int LEFT_PX = 96;
    private static final int RIGHT_PX = 24;
    private static final int TOP_PX = 96;
    private static final int PLOT_PX = 420;
    private static final int MIN_WIDTH_PX = 640;
    private static final int MAX_WIDTH_PX = 1800;
    private static final int ROW_GAP_PX = 24;
    private static final Font TITLE = new Font(Font.SANS_SERIF, Font.BOLD, 17);
    private static final Font TEXT = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
    private static final Font SMALL = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
    private static final Color GRID = new Color(0xDDDDDD);
    private static final Color INK = new Color(0x222222);

    private BarChart() {}

    /** A system's colour, the same on every chart: fixed for ours and Kafka, by name for others. */
    static Color colour(String system) {
        return switch (system) {
            case "stellflow" -> STELLFLOW;
            case "kafka" -> KAFKA;
            default -> OTHERS[Math.floorMod(system.hashCode(), OTHERS.length)];
        };
    }

    /** Draws {@code spec} and writes it to {@code file} (through a temporary file and a rename). */
    static void write(Spec spec, Path file) throws IOException {
        BufferedImage img = render(spec);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        if (!ImageIO.write(img, "png", tmp.toFile())) {
            throw new IllegalStateException("no PNG writer in this JDK");
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static BufferedImage render(Spec spec) {
        int systems = spec.series().size();
        int groupPx = systems * BAR_PX + (systems - 1) * BAR_GAP_PX;
        int n = spec.categories().size();
        // More cases than fit MAX_WIDTH_PX go on further rows, all on the same scale: the matrix
        // has 108 max-throughput cases, 11,220 px in one row.
        int perRow = Math.max(1, Math.min(n, (MAX_WIDTH_PX - LEFT_PX - RIGHT_PX) / (groupPx + GROUP_GAP_PX)));
        int rows = (n + perRow - 1) / perRow;
        int width = Math.max(MIN_WIDTH_PX, LEFT_PX + RIGHT_PX + perRow * (groupPx + GROUP_GAP_PX));
        // A chart of few cases spreads them over its minimum width.
        int slotPx = (width - LEFT_PX - RIGHT_PX) / perRow;
        // Case names wrap at their dashes to the width of their slot.
        BufferedImage probe = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB);
        Graphics2D pg = probe.createGraphics();
        FontMetrics textFm = pg.getFontMetrics(TEXT);
        List<List<String>> labels = new ArrayList<>();
        int lines = 1;
        for (String c : spec.categories()) {
            List<String> l = wrap(c, textFm, slotPx - 6);
            labels.add(l);
            lines = Math.max(lines, l.size());
        }
        pg.dispose();
        int rowPx = PLOT_PX + 24 + lines * textFm.getHeight() + ROW_GAP_PX;
        int height = TOP_PX + rows * rowPx - ROW_GAP_PX;

        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            g.setColor(INK);
            g.setFont(TITLE);
            g.drawString(spec.title(), LEFT_PX, 28);
            g.setFont(SMALL);
            g.drawString(spec.subtitle(), LEFT_PX, 48);
            drawLegend(g, spec, width);
            for (int row = 0; row < rows; row++) {
                int top = TOP_PX + row * rowPx;
                Axis axis = Axis.of(spec, top, top + PLOT_PX);
                drawAxis(g, spec, axis, width);
                int plotLeft = LEFT_PX + (slotPx - groupPx) / 2;
                for (int c = row * perRow; c < Math.min(n, (row + 1) * perRow); c++) {
                    int groupLeft = plotLeft + (c - row * perRow) * slotPx;
                    for (int s = 0; s < systems; s++) {
                        drawBar(g, axis, spec.series().get(s), c, groupLeft + s * (BAR_PX + BAR_GAP_PX));
                    }
                    g.setFont(TEXT);
                    g.setColor(INK);
                    int y = top + PLOT_PX + 8 + textFm.getAscent();
                    for (String line : labels.get(c)) {
                        int w = g.getFontMetrics().stringWidth(line);
                        g.drawString(line, groupLeft + (groupPx - w) / 2, y);
                        y += textFm.getHeight();
                    }
                }
            }
        } finally {
            g.dispose();
        }
        return img;
    }

    private static void drawAxis(Graphics2D g, Spec spec, Axis axis, int width) {
        g.setFont(SMALL);
        for (double t : axis.ticks()) {
            int y = axis.y(t);
            g.setColor(GRID);
            g.drawLine(LEFT_PX, y, width - RIGHT_PX, y);
            g.setColor(INK);
            String s = tick(t);
            g.drawString(s, LEFT_PX - 6 - g.getFontMetrics().stringWidth(s), y + 4);
        }
        g.setColor(INK);
        g.drawLine(LEFT_PX, axis.topPx(), LEFT_PX, axis.bottomPx());
        g.drawLine(LEFT_PX, axis.bottomPx(), width - RIGHT_PX, axis.bottomPx());
        g.setFont(TEXT);
        String unit = spec.unit() + (spec.logScale() ? " (log scale)" : "");
        AffineTransform saved = g.getTransform();
        g.rotate(-Math.PI / 2);
        int w = g.getFontMetrics().stringWidth(unit);
        g.drawString(unit, -((axis.topPx() + axis.bottomPx()) / 2) - w / 2, 20);
        g.setTransform(saved);
    }

    private static void drawLegend(Graphics2D g, Spec spec, int width) {
        g.setFont(TEXT);
        FontMetrics fm = g.getFontMetrics();
        int x = width - RIGHT_PX;
        for (int s = spec.series().size() - 1; s >= 0; s--) {
            String name = spec.series().get(s).system();
            x -= fm.stringWidth(name) + 18 + 16;
            g.setColor(colour(name));
            g.fillRect(x, 62, 14, 14);
            g.setColor(INK);
            g.drawString(name, x + 18, 74);
        }
    }

    private static void drawBar(Graphics2D g, Axis axis, Series series, int c, int x) {
        double v = series.median()[c];
        int base = axis.y(axis.base());
        g.setFont(SMALL);
        FontMetrics fm = g.getFontMetrics();
        if (Double.isNaN(v) || (axis.log && v <= 0)) {
            g.setColor(Color.GRAY);
            g.drawString("n/a", x + (BAR_PX - fm.stringWidth("n/a")) / 2, base - 4);
            return;
        }
        int top = axis.y(v);
        g.setColor(colour(series.system()));
        g.fillRect(x, top, BAR_PX, Math.max(1, base - top));
        int labelY = top;
        double lo = series.min()[c];
        double hi = series.max()[c];
        if (!Double.isNaN(lo) && !Double.isNaN(hi) && hi > lo && (!axis.log || lo > 0)) {
            int yLo = axis.y(lo);
            int yHi = axis.y(hi);
            int mid = x + BAR_PX / 2;
            g.setColor(INK);
            g.setStroke(new BasicStroke(1.5f));
            g.drawLine(mid, yLo, mid, yHi);
            g.drawLine(mid - 8, yLo, mid + 8, yLo);
            g.drawLine(mid - 8, yHi, mid + 8, yHi);
            g.setStroke(new BasicStroke(1f));
            labelY = Math.min(labelY, yHi);
        }
        g.setColor(INK);
        String s = format(v);
        g.drawString(s, x + (BAR_PX - fm.stringWidth(s)) / 2, labelY - 5);
    }

    /** Splits {@code name} after its dashes into lines no wider than {@code maxPx}. */
    static List<String> wrap(String name, FontMetrics fm, int maxPx) {
        List<String> out = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        int from = 0;
        while (from < name.length()) {
            int dash = name.indexOf('-', from);
            int to = dash < 0 ? name.length() : dash + 1;
            String token = name.substring(from, to);
            if (!line.isEmpty() && fm.stringWidth(line + token) > maxPx) {
                out.add(line.toString());
                line.setLength(0);
            }
            line.append(token);
            from = to;
        }
        if (!line.isEmpty()) {
            out.add(line.toString());
        }
        return out;
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

    /** An axis tick: no trailing zeros ({@code 50}, {@code 0.2}, {@code 40,000}). */
    static String tick(double v) {
        BigDecimal d = new BigDecimal(v).round(new MathContext(6)).stripTrailingZeros();
        if (d.scale() <= 0) {
            return String.format(Locale.ROOT, "%,d", d.toBigInteger());
        }
        return d.toPlainString();
    }

    /** The value axis: maps values to pixel rows between {@code topPx} and {@code bottomPx}. */
    private record Axis(boolean log, double lo, double hi, int topPx, int bottomPx, List<Double> ticks) {
        static Axis of(Spec spec, int topPx, int bottomPx) {
            double max = 0;
            double minPositive = Double.POSITIVE_INFINITY;
            for (Series s : spec.series()) {
                for (double[] a : new double[][] {s.median(), s.max(), s.min()}) {
                    for (double v : a) {
                        if (!Double.isNaN(v) && v > 0) {
                            max = Math.max(max, v);
                            minPositive = Math.min(minPositive, v);
                        }
                    }
                }
            }
            if (max == 0) {
                max = 1;
                minPositive = 1;
            }
            List<Double> ticks = new ArrayList<>();
            if (spec.logScale()) {
                double lo = Math.pow(10, Math.floor(Math.log10(minPositive)));
                // Headroom above the highest whisker for its label: a third of a decade.
                double hi = max * Math.pow(10, 1.0 / 3);
                for (double d = lo; d <= hi * 1.0001; d *= 10) {
                    for (int m : new int[] {1, 2, 5}) {
                        if (d * m <= hi * 1.0001) {
                            ticks.add(d * m);
                        }
                    }
                }
                return new Axis(true, lo, hi, topPx, bottomPx, ticks);
            }
            double step = niceStep(max * 1.12 / 6);
            double hi = Math.ceil(max * 1.12 / step) * step;
            for (double t = 0; t <= hi + step / 1000; t += step) {
                ticks.add(t);
            }
            return new Axis(false, 0, hi, topPx, bottomPx, ticks);
        }

        double base() {
            return lo;
        }

        int y(double v) {
            double f = log
                    ? (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))
                    : (v - lo) / (hi - lo);
            return (int) Math.round(bottomPx - Math.min(1, Math.max(0, f)) * (bottomPx - topPx));
        }

        private static double niceStep(double raw) {
            double p = Math.pow(10, Math.floor(Math.log10(raw)));
            double m = raw / p;
            return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
        }
    }
}
