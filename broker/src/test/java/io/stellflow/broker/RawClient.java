package io.stellflow.broker;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.BodyWriter;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ApiMessage;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * A blocking test client on a plain socket: writes frames built with the protocol codecs and reads
 * response frames. Bodies are returned as unpooled heap buffers (no release needed).
 */
final class RawClient implements AutoCloseable {
    static final int DEFAULT_TIMEOUT_MS = 10_000;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    /** A response: its header and its body bytes (empty for header-only responses). */
    record Response(ResponseHeader header, ByteBuf body) {
        int correlationId() {
            return header.correlationId();
        }

        short errorCode() {
            return header.errorCode();
        }
    }

    RawClient(int port) throws IOException {
        this(port, -1, -1);
    }

    /**
     * A client with fixed socket buffers (bytes; -1 keeps the OS default), set before connecting so
     * that small ones also bound the TCP window: back-pressure tests keep the kernel from absorbing
     * what the broker refuses to read or the client refuses to receive.
     */
    RawClient(int port, int sendBufferBytes, int receiveBufferBytes) throws IOException {
        socket = new Socket();
        if (sendBufferBytes > 0) {
            socket.setSendBufferSize(sendBufferBytes);
        }
        if (receiveBufferBytes > 0) {
            socket.setReceiveBufferSize(receiveBufferBytes);
        }
        socket.connect(new InetSocketAddress("127.0.0.1", port), DEFAULT_TIMEOUT_MS);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(DEFAULT_TIMEOUT_MS);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    /** Sends a v0 request with the SDK-style header. */
    void send(short apiKey, int correlationId, ApiMessage body) throws IOException {
        send(RequestHeader.of(apiKey, (short) 0, correlationId, "test"), body);
    }

    void send(RequestHeader header, BodyWriter body) throws IOException {
        ByteBuf payload = Unpooled.buffer();
        header.write(payload);
        if (body != null) {
            body.write(payload);
        }
        sendPayload(payload);
    }

    /** Sends {@code header} followed by raw body bytes. */
    void sendWithBody(RequestHeader header, byte[] body) throws IOException {
        ByteBuf payload = Unpooled.buffer();
        header.write(payload);
        payload.writeBytes(body);
        sendPayload(payload);
    }

    private void sendPayload(ByteBuf payload) throws IOException {
        ByteBuf frame = Unpooled.buffer(4 + payload.readableBytes());
        frame.writeInt(payload.readableBytes());
        frame.writeBytes(payload);
        sendRaw(frame.array(), frame.arrayOffset(), frame.readableBytes());
    }

    void sendRaw(byte[] bytes) throws IOException {
        sendRaw(bytes, 0, bytes.length);
    }

    void sendRaw(byte[] bytes, int offset, int length) throws IOException {
        out.write(bytes, offset, length);
        out.flush();
    }

    /** Sends, then reads one response and checks it answers {@code correlationId}. */
    Response call(short apiKey, int correlationId, ApiMessage body) throws IOException {
        send(apiKey, correlationId, body);
        Response response = receive();
        if (response.correlationId() != correlationId) {
            throw new IOException("expected correlationId " + correlationId + ", got " + response.correlationId());
        }
        return response;
    }

    /** Reads one response frame. */
    Response receive() throws IOException {
        int frameLength = in.readInt();
        byte[] payload = new byte[frameLength];
        in.readFully(payload);
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        ResponseHeader header = ResponseHeader.read(buf);
        return new Response(header, buf.slice());
    }

    /** Reads one complete response frame as raw bytes, 4-byte length prefix included. */
    byte[] receiveRawFrame() throws IOException {
        int frameLength = in.readInt();
        byte[] frame = new byte[4 + frameLength];
        frame[0] = (byte) (frameLength >>> 24);
        frame[1] = (byte) (frameLength >>> 16);
        frame[2] = (byte) (frameLength >>> 8);
        frame[3] = (byte) frameLength;
        in.readFully(frame, 4, frameLength);
        return frame;
    }

    /** True when the broker closed the connection (EOF) within the timeout. */
    boolean isClosedByPeer() throws IOException {
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (EOFException e) {
            return true;
        } catch (IOException e) {
            return true; // connection reset
        }
    }

    /** This end's address: the broker sees it as the connection's remote address. */
    InetSocketAddress localAddress() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    void setTimeoutMs(int timeoutMs) throws IOException {
        socket.setSoTimeout(timeoutMs);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
