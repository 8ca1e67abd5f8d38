package io.stellflow.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BarChartTest {
    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
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
    void axisTicksHaveNoTrailingZeros() {
        assertThat(BarChart.tick(50.0)).isEqualTo("50");
        assertThat(BarChart.tick(40_000)).isEqualTo("40,000");
        assertThat(BarChart.tick(0.1 + 0.2)).isEqualTo("0.3");
        assertThat(BarChart.tick(2.5)).isEqualTo("2.5");
        assertThat(BarChart.tick(0)).isEqualTo("0");
    }

    @Test
    void manyCasesGoOnRowsInsteadOfAnUnreadableWidth() {
        List<String> cases = new java.util.ArrayList<>();
        double[] v = new double[60];
        for (int i = 0; i < 60; i++) {
            cases.add("produce-1KiB-p" + i + "-acks1-epoll");
            v[i] = 100 + i;
        }
        BarChart.Series ours = new BarChart.Series("stellflow", v, v, v);
        BarChart.Series kafka = new BarChart.Series("kafka", v, v, v);
        BufferedImage one =
                BarChart.render(new BarChart.Spec("t", "s", "MB/s", false, cases.subList(0, 5), List.of(ours, kafka)));
        BufferedImage many = BarChart.render(new BarChart.Spec("t", "s", "MB/s", false, cases, List.of(ours, kafka)));

        assertThat(many.getWidth()).isLessThanOrEqualTo(1800);
        // 60 cases of two bars at 166 px a case: ten a row, six rows.
        assertThat(many.getHeight()).isGreaterThan(5 * one.getHeight() - 5 * 96);
    }

    @Test
    void caseNamesWrapAfterTheirDashesToTheSlotWidth() {
        Graphics2D g = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB).createGraphics();
        FontMetrics fm = g.getFontMetrics(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        String name = "produce-16KiB-b1MiB-acks-1";
        int maxPx = fm.stringWidth("produce-16KiB-");

        List<String> lines = BarChart.wrap(name, fm, maxPx);

        assertThat(String.join("", lines)).isEqualTo(name);
        assertThat(lines)
                .hasSizeGreaterThan(1)
                .allSatisfy(l -> assertThat(fm.stringWidth(l)).isLessThanOrEqualTo(maxPx));
        assertThat(BarChart.wrap("consume-1KiB", fm, 1000)).containsExactly("consume-1KiB");
        g.dispose();
    }
}
