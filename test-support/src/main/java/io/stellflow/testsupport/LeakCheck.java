package io.stellflow.testsupport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty's leak detector (PARANOID in tests, {@code sf.test.argLine})
 * reported a buffer that was garbage collected without being released. Registered for every test
 * class of the module through {@code META-INF/services} (auto-detection is on in {@code
 * junit-platform.properties}); reports come from {@link RecordingLeakDetector}. A leak is reported
 * only after the buffer was collected and a later allocation polled the detector, so this forces a
 * few collections and allocations first ({@link #collectReports}).
 *
 * <p>A module opts in with two lines: {@code ${sf.test.leakArgLine}} in its surefire {@code argLine}
 * (root pom) and this class's name in its test resource {@code
 * META-INF/services/org.junit.jupiter.api.extension.Extension}.
 *
 * <p>Thread-safety: runs on JUnit's thread after each test class; reports are collected from every
 * thread (a leak found while another class's background close still runs is blamed on this class).
 */
public final class LeakCheck implements AfterAllCallback {
    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        List<String> leaks = collectReports();
        if (!leaks.isEmpty()) {
            // A summary follows the full reports: a CI log may keep only its tail.
            throw new AssertionError(leaks.size() + " Netty LEAK report(s) after " + context.getDisplayName() + ":\n"
                    + String.join("\n", leaks) + "\n"
                    + summary(context.getRequiredTestClass().getName(), leaks));
        }
    }

    /** Frames of our own code shown per report in {@link #summary}. */
    static final int SUMMARY_FRAMES = 12;

    /**
     * One line naming the test class, then for each report its first {@value #SUMMARY_FRAMES} distinct
     * frames of {@code io.stellflow} code (access records, most recent first, then where the buffer
     * was created): what a reader needs to find the owner that did not release, in a few lines.
     */
    static String summary(String testClass, List<String> leaks) {
        StringBuilder b = new StringBuilder()
                .append("LEAK SUMMARY: ")
                .append(leaks.size())
                .append(" report(s) after ")
                .append(testClass);
        for (int i = 0; i < leaks.size(); i++) {
            b.append("\n  report ").append(i + 1).append(':');
            Set<String> frames = new LinkedHashSet<>();
            for (String line : leaks.get(i).split("\n")) {
                String frame = line.strip();
                if (frame.startsWith("io.stellflow.")) {
                    frames.add(frame);
                    if (frames.size() == SUMMARY_FRAMES) {
                        break;
                    }
                }
            }
            for (String frame : frames) {
                b.append("\n    ").append(frame);
            }
        }
        return b.toString();
    }

    /**
     * Runs the GC and allocates tracked buffers of each kind until pending reports have surfaced, then
     * returns (and clears) every report so far.
     *
     * @throws IllegalStateException when {@link RecordingLeakDetector} is not Netty's detector (the
     *     argLine is missing): leaks would then go unnoticed
     */
    public static List<String> collectReports() throws InterruptedException {
        if (!RecordingLeakDetector.installed()) {
            // Creating a buffer makes Netty create its detector if nothing did yet.
            Unpooled.buffer(1).release();
            if (!RecordingLeakDetector.installed()) {
                throw new IllegalStateException("Netty does not use RecordingLeakDetector: run the tests with"
                        + " -Dio.netty.customResourceLeakDetector=" + RecordingLeakDetector.class.getName());
            }
        }
        for (int round = 0; round < 3; round++) {
            System.gc();
            Thread.sleep(20);
            for (int i = 0; i < 100; i++) {
                ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                pooled.release();
                ByteBuf unpooled = Unpooled.directBuffer(16);
                unpooled.release();
            }
        }
        return RecordingLeakDetector.drain();
    }
}
