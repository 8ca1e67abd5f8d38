package io.stellflow.server.common.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The node's pid file, written by {@code bin/_node.sh} before it {@code exec}s the JVM (so the file
 * holds this JVM's pid, the one {@code bin/stellflow-server-stop.sh}, the perf lab's CPU readings and
 * profilers need) and named to the JVM with {@code -Dstellflow.pid.file}. {@link #removeAtExit()}
 * deletes it when the JVM ends by {@code System.exit}, a return from {@code main} or SIGTERM/SIGINT
 * (a failed start included); after SIGKILL the file stays, and the launcher's next start sees that
 * its pid is no longer a Stellflow process and writes over it.
 *
 * <p>Only a file that still holds this JVM's pid is deleted: a second launcher refused on the same
 * config file never removes the first node's file. Thread-safety: call from {@code main}.
 */
public final class PidFile {
    /** System property naming the pid file ({@code bin/_node.sh} sets it). */
    public static final String PROPERTY = "stellflow.pid.file";

    private PidFile() {}

    /** Registers the shutdown hook when {@value #PROPERTY} is set; does nothing otherwise. */
    public static void removeAtExit() {
        String file = System.getProperty(PROPERTY);
        if (file == null || file.isBlank()) {
            return;
        }
        Path path = Path.of(file);
        String self = Long.toString(ProcessHandle.current().pid());
        Runtime.getRuntime()
                .addShutdownHook(Thread.ofPlatform().name("pid-file").unstarted(() -> removeIfOurs(path, self)));
    }

    /** Deletes {@code path} when it holds {@code pid}; true when it did. Never throws. */
    static boolean removeIfOurs(Path path, String pid) {
        try {
            if (Files.readString(path, StandardCharsets.US_ASCII).strip().equals(pid)) {
                return Files.deleteIfExists(path);
            }
        } catch (IOException | RuntimeException e) {
            // Gone already or unreadable: nothing of ours to remove.
        }
        return false;
    }
}
