package io.stellflow.tools;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.client.HostPort;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiVersionsRequest;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;

/**
 * Tells what listens at a {@code host:port} in one short exchange, so a tool given the wrong kind of
 * address says so at once instead of timing out: it connects, sends one ApiVersions request of our
 * binary protocol and reads the first bytes back.
 *
 * <ul>
 *   <li>{@link Kind#DATA_PLANE}: a frame with our correlation id came back (a broker's listener).
 *   <li>{@link Kind#CONTROL_PLANE}: an HTTP/2 SETTINGS or GOAWAY frame on stream 0 came back (the
 *       preface a gRPC server sends on every new connection: a controller's {@code
 *       controller.listener}).
 *   <li>{@link Kind#UNREACHABLE}: the connection was refused or not made within the timeout.
 *   <li>{@link Kind#OTHER}: something else answered, or nothing did within the timeout.
 * </ul>
 *
 * <p>Thread-safety: stateless; each call uses its own socket, closed before it returns.
 */
final class PortProbe {
    /** What answered. */
    enum Kind {
        DATA_PLANE,
        CONTROL_PLANE,
        UNREACHABLE,
        OTHER
    }

    /**
     * @param kind what answered
     * @param detail why, for an error message (for example {@code Connection refused})
     */
    record Result(Kind kind, String detail) {}

    /** Our correlation id: its bytes can never be a stream id of 0 in an HTTP/2 frame header. */
    static final int CORRELATION_ID = 0x5f1e_7001;

    /** HTTP/2 frame header: length (3 bytes), type (1), flags (1), stream id (4); RFC 9113 §4.1. */
    private static final int HTTP2_FRAME_HEADER_BYTES = 9;

    private static final int HTTP2_SETTINGS = 0x4;
    private static final int HTTP2_GOAWAY = 0x7;

    /** The start of {@link Result#detail} for a host name that does not resolve. */
    static final String UNKNOWN_HOST = "unknown host ";

    private PortProbe() {}

    /**
     * Probes {@code address}, waiting at most {@code timeoutMs} for the connection and again for the
     * first bytes of the answer.
     *
     * @throws IllegalArgumentException when {@code address} is not {@code host:port}
     */
    static Result probe(String address, int timeoutMs) {
        HostPort hp = HostPort.parse(address.trim());
        try (Socket s = new Socket()) {
            try {
                s.connect(new InetSocketAddress(hp.host(), hp.port()), timeoutMs);
            } catch (SocketTimeoutException e) {
                return new Result(Kind.UNREACHABLE, "no connection within " + timeoutMs + " ms");
            } catch (java.net.UnknownHostException e) {
                return new Result(Kind.UNREACHABLE, UNKNOWN_HOST + hp.host());
            } catch (IOException e) {
                return new Result(Kind.UNREACHABLE, e.getMessage() == null ? e.toString() : e.getMessage());
            }
            s.setSoTimeout(timeoutMs);
            s.getOutputStream().write(apiVersionsFrame());
            s.getOutputStream().flush();
            byte[] head = new byte[HTTP2_FRAME_HEADER_BYTES];
            int n = readUpTo(s.getInputStream(), head);
            return classify(head, n);
        } catch (SocketTimeoutException e) {
            return new Result(Kind.OTHER, "no answer within " + timeoutMs + " ms");
        } catch (IOException e) {
            return new Result(Kind.OTHER, "connection failed: " + e.getMessage());
        }
    }

    /** What the first {@code n} bytes of an answer say. */
    static Result classify(byte[] head, int n) {
        if (n >= 8 && intAt(head, 4) == CORRELATION_ID) {
            return new Result(Kind.DATA_PLANE, "answers the Stellflow (Kafka-style) binary protocol");
        }
        if (n >= HTTP2_FRAME_HEADER_BYTES) {
            int type = head[3] & 0xff;
            int streamId = intAt(head, 5) & 0x7fff_ffff;
            if ((type == HTTP2_SETTINGS || type == HTTP2_GOAWAY) && streamId == 0) {
                return new Result(Kind.CONTROL_PLANE, "answers HTTP/2 (gRPC)");
            }
        }
        if (n >= 5 && new String(head, 0, 5, java.nio.charset.StandardCharsets.US_ASCII).equals("HTTP/")) {
            return new Result(Kind.OTHER, "answers HTTP/1 (a metrics or web port?)");
        }
        return new Result(
                Kind.OTHER, n <= 0 ? "closed the connection without answering" : "answers an unknown protocol");
    }

    private static byte[] apiVersionsFrame() {
        ByteBuf buf = Unpooled.buffer(64);
        try {
            Frames.writeRequest(
                    buf,
                    RequestHeader.of(ApiKeys.API_VERSIONS, (short) 0, CORRELATION_ID, "stellflow-tools"),
                    new ApiVersionsRequest("stellflow-tools", "0.1.0", List.of())::write);
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            return bytes;
        } finally {
            buf.release();
        }
    }

    /** Reads until {@code into} is full or the stream ends; returns the count read. */
    private static int readUpTo(InputStream in, byte[] into) throws IOException {
        int n = 0;
        while (n < into.length) {
            int r = in.read(into, n, into.length - n);
            if (r < 0) {
                break;
            }
            n += r;
        }
        return n;
    }

    private static int intAt(byte[] b, int i) {
        return ((b[i] & 0xff) << 24) | ((b[i + 1] & 0xff) << 16) | ((b[i + 2] & 0xff) << 8) | (b[i + 3] & 0xff);
    }
}
