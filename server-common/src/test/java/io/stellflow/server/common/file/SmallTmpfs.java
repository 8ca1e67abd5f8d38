package io.stellflow.server.common.file;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * A small real file system for disk-full tests: a {@code tmpfs} of a given size mounted on a fresh
 * directory under {@code /tmp} (needs root, as in CI; where {@code mount} fails the test is skipped
 * with an assumption that says why, never passed silently). {@link #close} unmounts and removes the
 * directory.
 *
 * <p>Thread-safety: one test thread.
 */
public final class SmallTmpfs implements AutoCloseable {
    private final Path mountPoint;

    private SmallTmpfs(Path mountPoint) {
        this.mountPoint = mountPoint;
    }

    /**
     * Mounts a tmpfs of {@code sizeBytes} (rounded up to pages by the kernel), or skips the calling
     * test (JUnit assumption) when that is impossible here.
     */
    public static SmallTmpfs mountOrSkip(long sizeBytes) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "sf-tmpfs-");
        String error = run("mount", "-t", "tmpfs", "-o", "size=" + sizeBytes, "tmpfs", dir.toString());
        if (error != null) {
            Files.deleteIfExists(dir);
        }
        assumeTrue(
                error == null,
                "disk-full test skipped: cannot mount a " + sizeBytes + "-byte tmpfs on " + dir
                        + " (needs root and mount(8)): " + error);
        return new SmallTmpfs(dir);
    }

    /** The mounted directory. */
    public Path dir() {
        return mountPoint;
    }

    /** Bytes a non-root writer may still allocate here. */
    public long usableBytes() throws IOException {
        return Files.getFileStore(mountPoint).getUsableSpace();
    }

    /**
     * Writes zeros to {@code file} until the file system is full (the last write fails with ENOSPC)
     * and returns the bytes written; deleting the file frees them again.
     */
    public long fill(Path file) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate(4096);
        long written = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (true) {
                chunk.clear();
                written += ch.write(chunk);
            }
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left on device")) {
                throw e;
            }
        }
        return written;
    }

    /** Unmounts (lazily if busy) and deletes the mount point. */
    @Override
    public void close() throws IOException, InterruptedException {
        String error = run("umount", mountPoint.toString());
        if (error != null) {
            error = run("umount", "-l", mountPoint.toString());
        }
        if (error != null) {
            throw new IOException("cannot unmount " + mountPoint + ": " + error);
        }
        Files.deleteIfExists(mountPoint);
    }

    /** Runs a command; null when it exited 0, else its output (or the reason it could not start). */
    private static String run(String... command) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return String.join(" ", command) + " did not finish in 30 s";
            }
            String out = new String(p.getInputStream().readAllBytes()).trim();
            return p.exitValue() == 0 ? null : "exit " + p.exitValue() + ": " + out;
        } catch (IOException e) {
            return e.getMessage();
        }
    }
}
