package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * OffsetHistory response v0 (apiKey 25, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * errorCode int16 | entries[]: timestampMs int64 | topic string | partition int32 | oldOffset int64
 *                  | newOffset int64 | source string | principal string | clientId string
 *                  | memberId nullable string
 * </pre>
 *
 * Worked example (one reset of "t" partition 0 from 5 to 0 at 1000 ms by ANONYMOUS, client "c"):
 * {@code 0000 00000001 00000000000003e8 0001 74 00000000 0000000000000005 0000000000000000 0005
 * 7265736574 0009 414e4f4e594d4f5553 0001 63 ffff}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record OffsetHistoryResponse(short errorCode, List<OffsetHistoryEntry> entries) implements ApiMessage {

    /** source of a commit by a member or a client. */
    public static final String SOURCE_COMMIT = "commit";

    /** source of a reset by a tool ({@code --reset-offsets --execute}). */
    public static final String SOURCE_RESET = "reset";

    /** source of a deletion (OffsetDelete, DeleteGroups, a deleted topic, expiry). */
    public static final String SOURCE_DELETE = "delete";

    /** oldOffset when there was no committed offset before. */
    public static final long NO_OFFSET = -1L;

    public OffsetHistoryResponse {
        entries = List.copyOf(entries);
    }

    /**
     * One offset change.
     *
     * @param timestampMs when the coordinator applied it, ms since the epoch
     * @param oldOffset the offset before, or {@link #NO_OFFSET}
     * @param newOffset the offset after, or {@link #NO_OFFSET} when deleted
     * @param source {@link #SOURCE_COMMIT}, {@link #SOURCE_RESET}, {@link #SOURCE_DELETE}, ...
     * @param principal who asked ("ANONYMOUS" until security lands)
     * @param memberId the committing member, or null from outside the group
     */
    public record OffsetHistoryEntry(
            long timestampMs,
            String topic,
            int partition,
            long oldOffset,
            long newOffset,
            String source,
            String principal,
            String clientId,
            String memberId) {}

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        writeArray(out, entries, (b, e) -> {
            b.writeLong(e.timestampMs());
            writeString(b, e.topic(), "topic");
            b.writeInt(e.partition());
            b.writeLong(e.oldOffset());
            b.writeLong(e.newOffset());
            writeString(b, e.source(), "source");
            writeString(b, e.principal(), "principal");
            writeString(b, e.clientId(), "clientId");
            writeNullableString(b, e.memberId());
        });
    }

    public static OffsetHistoryResponse read(ByteBuf body) {
        short errorCode = readInt16(body, "errorCode");
        List<OffsetHistoryEntry> entries = readArray(
                body,
                "entries",
                b -> new OffsetHistoryEntry(
                        readInt64(b, "timestampMs"),
                        readString(b, "topic"),
                        readInt32(b, "partition"),
                        readInt64(b, "oldOffset"),
                        readInt64(b, "newOffset"),
                        readString(b, "source"),
                        readString(b, "principal"),
                        readString(b, "clientId"),
                        readNullableString(b, "memberId")));
        ensureFullyRead(body, "OffsetHistoryResponse");
        return new OffsetHistoryResponse(errorCode, entries);
    }
}
