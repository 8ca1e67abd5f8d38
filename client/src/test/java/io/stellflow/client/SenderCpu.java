package io.stellflow.client;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;

/** Tests only: the CPU time a producer's sender thread spends while the test waits. */
final class SenderCpu {
    private SenderCpu() {}

    /**
     * Nanoseconds of CPU the sender thread of the producer with {@code clientId} used while the
     * calling thread slept {@code window}; the thread must be running.
     */
    static long nanosOver(String clientId, Duration window) throws InterruptedException {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        String name = "stellflow-producer-sender-" + clientId;
        long sender = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no thread " + name))
                .threadId();
        long beforeNs = threads.getThreadCpuTime(sender);
        Thread.sleep(window.toMillis());
        return threads.getThreadCpuTime(sender) - beforeNs;
    }
}
