package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ConsumerGroupHeartbeat response v0 (apiKey 20, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * errorCode int16 | errorMessage nullable string | memberId nullable string | memberEpoch int32
 * | heartbeatIntervalMs int32 | sessionTimeoutMs int32 | assignment nullable TopicPartitions[]
 * </pre>
 *
 * Worked example (member "m" at epoch 2, heartbeat every 3000 ms, session 45000 ms, assigned "t"
 * partition 0): {@code 0000 ffff 0001 6d 00000002 00000bb8 0000afc8 00000001 0001 74 00000001
 * 00000000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 *
 * @param errorCode 0 or a group code (42..50), NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, ...
 * @param errorMessage a reason for the error, or null
 * @param memberId the member's id (assigned by the broker on a join); null on error
 * @param memberEpoch the member's new epoch; -1 on error
 * @param heartbeatIntervalMs when to send the next heartbeat; -1 on error
 * @param sessionTimeoutMs the session the broker enforces; -1 on error
 * @param assignment the member's full assignment, reconciled to the target; null = unchanged
 */
public record ConsumerGroupHeartbeatResponse(
        short errorCode,
        String errorMessage,
        String memberId,
        int memberEpoch,
        int heartbeatIntervalMs,
        int sessionTimeoutMs,
        List<TopicPartitions> assignment)
        implements ApiMessage {

    public ConsumerGroupHeartbeatResponse {
        assignment = assignment == null ? null : List.copyOf(assignment);
    }

    /** The response for {@code errorCode}: memberId null, epoch and intervals -1, assignment null. */
    public static ConsumerGroupHeartbeatResponse error(short errorCode, String errorMessage) {
        return new ConsumerGroupHeartbeatResponse(errorCode, errorMessage, null, -1, -1, -1, null);
    }

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        writeNullableString(out, errorMessage);
        writeNullableString(out, memberId);
        out.writeInt(memberEpoch);
        out.writeInt(heartbeatIntervalMs);
        out.writeInt(sessionTimeoutMs);
        TopicPartitions.writeNullableList(out, assignment);
    }

    public static ConsumerGroupHeartbeatResponse read(ByteBuf body) {
        ConsumerGroupHeartbeatResponse r = new ConsumerGroupHeartbeatResponse(
                readInt16(body, "errorCode"),
                readNullableString(body, "errorMessage"),
                readNullableString(body, "memberId"),
                readInt32(body, "memberEpoch"),
                readInt32(body, "heartbeatIntervalMs"),
                readInt32(body, "sessionTimeoutMs"),
                TopicPartitions.readNullableList(body, "assignment"));
        ensureFullyRead(body, "ConsumerGroupHeartbeatResponse");
        return r;
    }
}
