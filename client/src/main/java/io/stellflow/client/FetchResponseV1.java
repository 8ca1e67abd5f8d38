package io.stellflow.client;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableBytes;
import static io.stellflow.protocol.WireReader.readString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.message.FetchResponse.AbortedTransaction;
import java.util.List;

/**
 * Fetch v1 response body (Stellflow's own version; the broker's {@code
 * io.stellflow.broker.fetch.FetchV1Layout} has the byte layout). Same as v0 except that each
 * partition carries {@code recordsBaseOffset} (int64, before records): the records are stored
 * batches untouched, and a record's offset is {@code recordsBaseOffset + baseOffsetDelta +
 * offsetDelta}. Kept in the client module because the shared protocol module belongs to another
 * team; it should move there.
 *
 * <p>Thread-safety: immutable records; {@code records} is a slice of the response buffer, valid
 * while that buffer is.
 *
 * @param sessionId always 0
 * @param responses per topic, in request order
 */
public record FetchResponseV1(int sessionId, List<Topic> responses) {
    /** The apiVersion of this layout. */
    public static final short VERSION = 1;

    /**
     * @param topic the topic name
     * @param partitions per partition, in request order
     */
    public record Topic(String topic, List<PartitionData> partitions) {}

    /**
     * @param recordsBaseOffset the offset stored baseOffsetDeltas count from; -1 without records
     * @param records whole stored batches (length 0 when none)
     */
    public record PartitionData(
            int partition,
            short errorCode,
            long highWatermark,
            long logStartOffset,
            long lastStableOffset,
            List<AbortedTransaction> abortedTransactions,
            long recordsBaseOffset,
            ByteBuf records) {}

    /**
     * Strict decode of a whole body.
     *
     * @throws io.stellflow.protocol.ProtocolException when the body is malformed or has bytes left
     */
    public static FetchResponseV1 read(ByteBuf body) {
        int sessionId = readInt32(body, "sessionId");
        List<Topic> responses = readArray(
                body,
                "responses",
                b -> new Topic(readString(b, "topic"), readArray(b, "partitions", FetchResponseV1::readPartition)));
        ensureFullyRead(body, "FetchResponse v1");
        return new FetchResponseV1(sessionId, responses);
    }

    private static PartitionData readPartition(ByteBuf p) {
        return new PartitionData(
                readInt32(p, "partition"),
                readInt16(p, "errorCode"),
                readInt64(p, "highWatermark"),
                readInt64(p, "logStartOffset"),
                readInt64(p, "lastStableOffset"),
                readArray(
                        p,
                        "abortedTransactions",
                        a -> new AbortedTransaction(readInt64(a, "producerId"), readInt64(a, "firstOffset"))),
                readInt64(p, "recordsBaseOffset"),
                readNullableBytes(p, "records"));
    }
}
