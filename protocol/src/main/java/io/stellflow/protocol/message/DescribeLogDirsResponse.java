package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeLogDirs response v0 (apiKey 26, {@code docs/protocol-additions.md}): per log dir of the
 * answering broker ({@code log.dirs} order) its state, its file system's total and usable bytes, and
 * each partition it holds with the bytes of its segments.
 *
 * <pre>
 * logDirs[]:
 *   logDir        string
 *   errorCode     int16     0, or 56 KAFKA_STORAGE_ERROR for an offline dir (no partitions listed)
 *   totalBytes    int64     size of the dir's file system; -1 unknown
 *   usableBytes   int64     bytes free for this JVM there; -1 unknown
 *   partitions[]:
 *     topic       string
 *     partition   int32
 *     sizeBytes   int64     bytes of the partition's segment (.log) files
 *     logEndOffset int64
 * </pre>
 *
 * Worked example: dir "/d", 4096 bytes of which 1024 free, topic "t" partition 0 with 130 bytes and
 * log end offset 2: {@code 00000001 0002 2f64 0000 0000000000001000 0000000000000400 00000001 0001 74
 * 00000000 0000000000000082 0000000000000002}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record DescribeLogDirsResponse(List<LogDir> logDirs) implements ApiMessage {
    public DescribeLogDirsResponse {
        logDirs = List.copyOf(logDirs);
    }

    /** One log dir and the partitions in it. */
    public record LogDir(
            String logDir, short errorCode, long totalBytes, long usableBytes, List<PartitionSize> partitions) {
        public LogDir {
            partitions = List.copyOf(partitions);
        }
    }

    /** One partition's size on disk (bytes) and log end offset. */
    public record PartitionSize(String topic, int partition, long sizeBytes, long logEndOffset) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, logDirs, (b, d) -> {
            writeString(b, d.logDir(), "logDir");
            b.writeShort(d.errorCode());
            b.writeLong(d.totalBytes());
            b.writeLong(d.usableBytes());
            writeArray(b, d.partitions(), (p, s) -> {
                writeString(p, s.topic(), "topic");
                p.writeInt(s.partition());
                p.writeLong(s.sizeBytes());
                p.writeLong(s.logEndOffset());
            });
        });
    }

    public static DescribeLogDirsResponse read(ByteBuf body) {
        List<LogDir> dirs = readArray(
                body,
                "logDirs",
                b -> new LogDir(
                        readString(b, "logDir"),
                        readInt16(b, "errorCode"),
                        readInt64(b, "totalBytes"),
                        readInt64(b, "usableBytes"),
                        readArray(
                                b,
                                "partitions",
                                p -> new PartitionSize(
                                        readString(p, "topic"),
                                        readInt32(p, "partition"),
                                        readInt64(p, "sizeBytes"),
                                        readInt64(p, "logEndOffset")))));
        ensureFullyRead(body, "DescribeLogDirsResponse");
        return new DescribeLogDirsResponse(dirs);
    }
}
