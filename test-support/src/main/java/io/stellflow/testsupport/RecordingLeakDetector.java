package io.stellflow.testsupport;

import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Netty's leak detector, keeping every report so that a test can fail on it ({@link LeakCheck});
 * Netty itself only logs a leak. Installed for the whole test JVM by the module's surefire argLine
 * ({@code -Dio.netty.customResourceLeakDetector=} this class), so it also sees buffers allocated
 * before the first test class runs. Reports still go to Netty's log as well.
 *
 * <p>Thread-safety: reports arrive on any allocating thread; the list is concurrent.
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    /** The constructor Netty's factory calls. */
    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        this(resourceType, samplingInterval);
    }

    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        installed = true;
    }

    /** True once Netty created a detector of this class (the argLine took effect). */
    public static boolean installed() {
        return installed;
    }

    /** The reports since the last call, which clears them. */
    public static List<String> drain() {
        List<String> copy = List.copyOf(LEAKS);
        LEAKS.removeAll(copy);
        return copy;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add("LEAK: " + resourceType + " was not released" + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: " + resourceType + " was not released (no access records)");
        super.reportUntracedLeak(resourceType);
    }
}
