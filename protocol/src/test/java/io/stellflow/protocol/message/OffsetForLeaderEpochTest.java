package io.stellflow.protocol.message;

import static io.stellflow.protocol.support.Bufs.hexOf;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest.PartitionEpoch;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse.EpochEndOffset;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * OffsetForLeaderEpoch (apiKey 100): request and response frames byte-exact against golden hex in
 * both directions (the worked examples of the codecs' Javadoc), random round trips, strictness.
 */
class OffsetForLeaderEpochTest {
    /**
     * Request frame, correlationId 7, clientId null: frameLength 60, header 0064 0000 0002 00000007
     * + six null strings, trafficClass 0, flags 0; body: replicaId 2, "orders" partition 0, current
     * epoch 5, leaderEpoch 3.
     */
    static final String REQUEST = "0000003c" + "0064" + "0000" + "0002" + "00000007" + "ffff" + "ffff" + "ffff" + "00"
            + "ffff" + "ffff" + "ffff" + "00" + "ffff" + "0000" + "00000002" + "00000001" + "0006" + "6f7264657273"
            + "00000001" + "00000000" + "00000005" + "00000003";

    /** Response frame, correlationId 7: "orders" partition 0, error 0, epoch 3 ends at offset 120. */
    static final String RESPONSE = "0000002e" + "00000007" + "0002" + "0000" + "00000000" + "00000001" + "0006"
            + "6f7264657273" + "00000001" + "00000000" + "0000" + "00000003" + "0000000000000078";

    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    private static OffsetForLeaderEpochRequest goldenRequest() {
        return new OffsetForLeaderEpochRequest(
                2, List.of(new OffsetForLeaderEpochRequest.Topic("orders", List.of(new PartitionEpoch(0, 5, 3)))));
    }

    private static OffsetForLeaderEpochResponse goldenResponse() {
        return new OffsetForLeaderEpochResponse(List.of(new OffsetForLeaderEpochResponse.Topic(
                "orders", List.of(new EpochEndOffset(0, Errors.NONE, 3, 120L)))));
    }

    @Test
    void requestEncodesToTheGoldenFrame() {
        ByteBuf out = bufs.heap();
        Frames.writeRequest(
                out,
                RequestHeader.of(ApiKeys.OFFSET_FOR_LEADER_EPOCH, OffsetForLeaderEpochRequest.VERSION, 7, null),
                goldenRequest());
        assertThat(hexOf(out)).isEqualTo(REQUEST);
        assertThat(out.readableBytes()).isEqualTo(4 + 28 + 32);
    }

    @Test
    void requestDecodesFromTheGoldenFrame() {
        ByteBuf frame = bufs.hex(REQUEST);
        assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
        RequestHeader header = RequestHeader.read(frame);
        assertThat(header.apiKey()).isEqualTo(ApiKeys.OFFSET_FOR_LEADER_EPOCH);
        assertThat(ApiKeys.name(header.apiKey())).isEqualTo("OffsetForLeaderEpoch");
        assertThat(OffsetForLeaderEpochRequest.read(frame)).isEqualTo(goldenRequest());
    }

    @Test
    void responseEncodesToAndDecodesFromTheGoldenFrame() {
        ByteBuf out = bufs.heap();
        Frames.writeResponse(out, 7, goldenResponse());
        assertThat(hexOf(out)).isEqualTo(RESPONSE);

        ByteBuf frame = bufs.hex(RESPONSE);
        assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
        assertThat(ResponseHeader.read(frame).correlationId()).isEqualTo(7);
        OffsetForLeaderEpochResponse decoded = OffsetForLeaderEpochResponse.read(frame);
        assertThat(decoded).isEqualTo(goldenResponse());
        assertThat(decoded.topics().get(0).partitions().get(0).endOffset()).isEqualTo(120L);
    }

    @Test
    void randomMessagesRoundTrip() {
        Random random = new Random(42);
        for (int i = 0; i < 200; i++) {
            int topicCount = 1 + random.nextInt(3);
            List<OffsetForLeaderEpochRequest.Topic> reqTopics = new java.util.ArrayList<>();
            List<OffsetForLeaderEpochResponse.Topic> respTopics = new java.util.ArrayList<>();
            for (int t = 0; t < topicCount; t++) {
                int partitions = 1 + random.nextInt(4);
                List<PartitionEpoch> asked = new java.util.ArrayList<>();
                List<EpochEndOffset> answered = new java.util.ArrayList<>();
                for (int p = 0; p < partitions; p++) {
                    asked.add(new PartitionEpoch(random.nextInt(1000), random.nextInt(50) - 1, random.nextInt(50) - 1));
                    answered.add(new EpochEndOffset(
                            random.nextInt(1000),
                            (short) random.nextInt(42),
                            random.nextInt(50) - 1,
                            random.nextLong(Long.MAX_VALUE) - 1));
                }
                String name = "topic-" + random.nextInt(100);
                reqTopics.add(new OffsetForLeaderEpochRequest.Topic(name, asked));
                respTopics.add(new OffsetForLeaderEpochResponse.Topic(name, answered));
            }
            OffsetForLeaderEpochRequest request = new OffsetForLeaderEpochRequest(random.nextInt(100) - 1, reqTopics);
            OffsetForLeaderEpochResponse response = new OffsetForLeaderEpochResponse(respTopics);
            ByteBuf a = bufs.heap();
            request.write(a);
            assertThat(OffsetForLeaderEpochRequest.read(a)).isEqualTo(request);
            ByteBuf b = bufs.heap();
            response.write(b);
            assertThat(OffsetForLeaderEpochResponse.read(b)).isEqualTo(response);
        }
    }

    @Test
    void strictDecodingRejectsBadRequests() {
        String body = REQUEST.substring(2 * (4 + 28));
        assertProtocolError(() -> OffsetForLeaderEpochRequest.read(bufs.hex(body + "00")), Errors.INVALID_REQUEST);
        assertProtocolError(
                () -> OffsetForLeaderEpochRequest.read(bufs.hex(body.substring(0, body.length() - 2))),
                Errors.INVALID_REQUEST);
        // replicaId -2
        assertProtocolError(
                () -> OffsetForLeaderEpochRequest.read(bufs.hex("fffffffe" + body.substring(8))),
                Errors.INVALID_REQUEST);
        // no topics; a topic without partitions
        assertProtocolError(
                () -> OffsetForLeaderEpochRequest.read(bufs.hex("00000002" + "00000000")), Errors.INVALID_REQUEST);
        assertProtocolError(
                () -> OffsetForLeaderEpochRequest.read(
                        bufs.hex("00000002" + "00000001" + "0006" + "6f7264657273" + "00000000")),
                Errors.INVALID_REQUEST);
        String responseBody = RESPONSE.substring(2 * (4 + 12));
        assertProtocolError(
                () -> OffsetForLeaderEpochResponse.read(bufs.hex(responseBody + "00")), Errors.INVALID_REQUEST);
    }

    @Test
    void epochCodesAreAllocatedAfterTheReservedGap() {
        assertThat(Errors.FENCED_LEADER_EPOCH).isEqualTo((short) 40);
        assertThat(Errors.UNKNOWN_LEADER_EPOCH).isEqualTo((short) 41);
        assertThat(Errors.name(Errors.FENCED_LEADER_EPOCH)).isEqualTo("FENCED_LEADER_EPOCH");
        assertThat(Errors.name(Errors.UNKNOWN_LEADER_EPOCH)).isEqualTo("UNKNOWN_LEADER_EPOCH");
        assertThat(Errors.name((short) 39)).isEqualTo("UNKNOWN(39)");
        // The next code after 41 went to the consumer groups (issue #19).
        assertThat(Errors.name((short) 42)).isEqualTo("UNKNOWN_MEMBER_ID");
    }
}
