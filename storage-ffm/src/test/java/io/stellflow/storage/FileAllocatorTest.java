package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.server.common.file.SmallTmpfs;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FileAllocator}: the native {@code fallocate(2)} path and the explicit-write fallback keep
 * the data below {@code keepBytes}, really allocate (a tmpfs's free space shrinks) and fail with an
 * {@link IOException} naming the file on a full file system.
 */
class FileAllocatorTest {
    @TempDir
    Path dir;

    private static byte[] data(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + 1);
        }
        return b;
    }

    @Test
    void theNativePathIsUsedOnLinux() {
        assertThat(FileAllocator.nativeAvailable())
                .as("64-bit Linux with native access (tests run with --enable-native-access)")
                .isEqualTo(System.getProperty("os.name").toLowerCase().contains("linux"));
    }

    @Test
    void allocationExtendsTheFileAndKeepsItsData() throws IOException {
        Path file = dir.resolve("a.index");
        Files.write(file, data(100));
        FileAllocator.allocate(file, 100, 8192);
        byte[] after = Files.readAllBytes(file);
        assertThat(after).hasSize(8192);
        assertThat(Arrays.copyOf(after, 100)).isEqualTo(data(100));
        assertThat(Arrays.copyOfRange(after, 100, 8192)).containsOnly(0);
    }

    @Test
    void theFallbackWritesZerosOnlyAfterTheKeptBytes() throws IOException {
        Path file = dir.resolve("b.index");
        Files.write(file, data(200));
        FileAllocator.writeZeros(file, 100, 200_000);
        byte[] after = Files.readAllBytes(file);
        assertThat(after).hasSize(200_000);
        assertThat(Arrays.copyOf(after, 100)).isEqualTo(Arrays.copyOf(data(200), 100));
        assertThat(Arrays.copyOfRange(after, 100, 200_000)).containsOnly(0);
    }

    @Test
    void anAllocationNeverShrinksAFile() throws IOException {
        Path file = dir.resolve("c.index");
        Files.write(file, data(4096));
        FileAllocator.allocate(file, 0, 1024);
        assertThat(Files.readAllBytes(file)).isEqualTo(data(4096));
    }

    @Test
    void bothPathsReallyAllocateAndFailWithTheFileOnAFullFileSystem() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(1 << 20)) {
            long free = fs.usableBytes();
            Path nativeFile = Files.createFile(fs.dir().resolve("native.index"));
            FileAllocator.allocate(nativeFile, 0, 256 << 10);
            Path written = Files.createFile(fs.dir().resolve("written.index"));
            FileAllocator.writeZeros(written, 0, 256 << 10);
            assertThat(fs.usableBytes()).as("both ranges hold blocks").isEqualTo(free - (512 << 10));

            Path tooBig = Files.createFile(fs.dir().resolve("big.index"));
            assertThatThrownBy(() -> FileAllocator.allocate(tooBig, 0, 1 << 20))
                    .isInstanceOf(FileSystemException.class)
                    .satisfies(e -> assertThat(StorageErrors.isNoSpace(e)).isTrue())
                    .satisfies(e -> assertThat(StorageErrors.fileOf(e)).isEqualTo(tooBig.toString()));
            Files.delete(tooBig);
            Path tooBigWritten = Files.createFile(fs.dir().resolve("big-written.index"));
            assertThatThrownBy(() -> FileAllocator.writeZeros(tooBigWritten, 0, 1 << 20))
                    .isInstanceOf(FileSystemException.class)
                    .satisfies(e -> assertThat(StorageErrors.isNoSpace(e)).isTrue())
                    .satisfies(e -> assertThat(StorageErrors.fileOf(e)).isEqualTo(tooBigWritten.toString()));
        }
    }
}
