package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;

class StorageErrorsTest {
    @Test
    void theJdksOwnErrorForAWriteToAFullDeviceIsNoSpace() throws IOException {
        IOException thrown = null;
        try (FileChannel ch = FileChannel.open(Path.of("/dev/full"), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        } catch (IOException e) {
            thrown = e;
        }
        assertThat(thrown).as("a write to /dev/full fails").isNotNull();
        assertThat(StorageErrors.isNoSpace(thrown)).isTrue();
    }

    @Test
    void fileSystemExceptionsAndWrappedCausesAreRecognised() {
        assertThat(StorageErrors.isNoSpace(
                        new FileSystemException("/d/t-0/recovery-point.tmp", null, "Disk quota exceeded")))
                .isTrue();
        assertThat(StorageErrors.isNoSpace(new UncheckedIOException(new IOException("No space left on device"))))
                .isTrue();
    }

    @Test
    void theFileAndTheReasonComeFromTheFirstFileSystemExceptionOfTheChain() {
        FileSystemException named =
                new FileSystemException("/d/t-0/00000000000000000000.log", null, "Input/output error");
        Exception wrapped = new IllegalStateException("append failed", named);
        assertThat(StorageErrors.fileOf(wrapped)).isEqualTo("/d/t-0/00000000000000000000.log");
        assertThat(StorageErrors.reasonOf(named)).isEqualTo("Input/output error");
        assertThat(StorageErrors.fileOf(new IOException("No space left on device")))
                .isNull();
        assertThat(StorageErrors.reasonOf(new IOException("No space left on device")))
                .isEqualTo("No space left on device");
        assertThat(StorageErrors.reasonOf(new InternalError())).isEqualTo("java.lang.InternalError");
    }

    @Test
    void otherIoErrorsAreNot() {
        assertThat(StorageErrors.isNoSpace(new IOException("Input/output error")))
                .isFalse();
        assertThat(StorageErrors.isNoSpace(new IOException((String) null))).isFalse();
        assertThat(StorageErrors.isNoSpace(new IOException("log /d/t-0 had a failed write; reopen it to recover")))
                .isFalse();
    }
}
