package io.stellflow.controller.server;

import io.stellflow.controller.proto.MetadataSnapshot;
import io.stellflow.server.common.file.AtomicFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Layout and durable I/O of a metadata snapshot file ({@code snapshot.<term>_<index>} in the Ratis
 * state-machine directory).
 *
 * <pre>
 * offset  size  field
 *      0     4  magic 0x53464D53 ("SFMS"), big-endian
 *      4     4  format version (1)
 *      8     8  payload length in bytes (L)
 *     16     4  CRC-32C of the payload
 *     20     L  payload: a protobuf MetadataSnapshot (metadata.proto)
 * </pre>
 *
 * Example: an empty image (payload {@code 08 01}, 2 bytes) is 22 bytes long: {@code 53 46 4D 53 00 00
 * 00 01 00 00 00 00 00 00 00 02 <crc> 08 01}.
 *
 * <p>Written with {@link AtomicFiles} (temp file, fsync, atomic rename, fsync of the directory); a
 * crash leaves the old set of snapshots plus at most a {@code .tmp} file. Read with every field
 * checked.
 *
 * <p>Thread-safety: stateless.
 *
 * <p>Errors: {@link IOException} naming the file for a short, torn or corrupt snapshot.
 */
public final class SnapshotFile {
    public static final int MAGIC = 0x53464D53;
    public static final int FORMAT_VERSION = 1;
    public static final int HEADER_BYTES = 20;
    /** Sanity bound on the payload: metadata of a very large cluster stays far below 1 GiB. */
    public static final long MAX_PAYLOAD_BYTES = 1L << 30;

    private SnapshotFile() {}

    /** Writes {@code snapshot} to {@code file} atomically. */
    public static void write(Path file, MetadataSnapshot snapshot) throws IOException {
        byte[] payload = snapshot.toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(payload);
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
        header.putInt(MAGIC).putInt(FORMAT_VERSION).putLong(payload.length).putInt((int) crc.getValue());
        header.flip();
        AtomicFiles.write(file, header, ByteBuffer.wrap(payload));
    }

    /** Reads and verifies a snapshot file. */
    public static MetadataSnapshot read(Path file) throws IOException {
        byte[] all = Files.readAllBytes(file);
        if (all.length < HEADER_BYTES) {
            throw new IOException(
                    "metadata snapshot " + file + " is " + all.length + " bytes, shorter than its header");
        }
        ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.BIG_ENDIAN);
        int magic = b.getInt();
        int version = b.getInt();
        long length = b.getLong();
        int storedCrc = b.getInt();
        if (magic != MAGIC) {
            throw new IOException("metadata snapshot " + file + " has bad magic 0x" + Integer.toHexString(magic));
        }
        if (version != FORMAT_VERSION) {
            throw new IOException("metadata snapshot " + file + " has unknown format version " + version);
        }
        if (length < 0 || length > MAX_PAYLOAD_BYTES || length != all.length - HEADER_BYTES) {
            throw new IOException("metadata snapshot " + file + " payload length " + length
                    + " does not match file size " + all.length);
        }
        CRC32C crc = new CRC32C();
        crc.update(all, HEADER_BYTES, (int) length);
        if ((int) crc.getValue() != storedCrc) {
            throw new IOException("metadata snapshot " + file + " fails its CRC-32C check (stored 0x"
                    + Integer.toHexString(storedCrc) + ", computed 0x" + Long.toHexString(crc.getValue()) + ")");
        }
        return MetadataSnapshot.parseFrom(ByteBuffer.wrap(all, HEADER_BYTES, (int) length));
    }
}
