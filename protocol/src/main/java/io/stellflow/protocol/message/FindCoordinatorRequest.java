package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt8;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * FindCoordinator request v0 (apiKey 7, {@code docs/spec/wire-protocol.md} §6.8) and v1 (ours,
 * {@code docs/protocol-additions.md}: the same layout, and keyType {@link #KEY_TYPE_TRANSACTION}
 * asks for a transactional id's coordinator).
 *
 * <pre>
 * key nullable string | keyType int8
 * </pre>
 *
 * Worked example (group "g"): {@code 0001 67 00}.
 *
 * <p>A null or empty key and a keyType other than {@link #KEY_TYPE_GROUP} are answered with
 * INVALID_REQUEST in the body by the broker, so the codec reads them. Immutable, thread-safe.
 * {@link #read} throws ProtocolException INVALID_REQUEST on any strict decoding violation.
 *
 * @param key the group id, or the transactional id (keyType 1)
 * @param keyType {@link #KEY_TYPE_GROUP}, the only type defined in v0; v1 adds {@link
 *     #KEY_TYPE_TRANSACTION}
 */
public record FindCoordinatorRequest(String key, byte keyType) implements ApiMessage {

    /** keyType of a group coordinator lookup. */
    public static final byte KEY_TYPE_GROUP = 0;

    /** keyType of a transaction coordinator lookup (FindCoordinator v1). */
    public static final byte KEY_TYPE_TRANSACTION = 1;

    /** The version that accepts {@link #KEY_TYPE_TRANSACTION}. */
    public static final short VERSION_WITH_TRANSACTION_KEY = 1;

    /** A lookup of {@code groupId}'s coordinator. */
    public static FindCoordinatorRequest forGroup(String groupId) {
        return new FindCoordinatorRequest(groupId, KEY_TYPE_GROUP);
    }

    @Override
    public void write(ByteBuf out) {
        writeNullableString(out, key);
        out.writeByte(keyType);
    }

    public static FindCoordinatorRequest read(ByteBuf body) {
        FindCoordinatorRequest r =
                new FindCoordinatorRequest(readNullableString(body, "key"), readInt8(body, "keyType"));
        ensureFullyRead(body, "FindCoordinatorRequest");
        return r;
    }
}
