package io.stellflow.broker.e2e;

import io.stellflow.protocol.ApiKeys;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of one broker that loses acks: the Produce requests whose numbers (1, 2, ...
 * counted over all connections) are in {@code dropped} reach the broker, which appends them, but when
 * the broker's answer comes back the proxy closes the client's connection instead of forwarding it,
 * as a network cut right after the append would. Everything else passes frame by frame.
 *
 * <p>Thread-safety: thread-safe; an acceptor thread and two virtual threads per connection.
 */
final class LostAckProxy implements AutoCloseable {
    private final ServerSocket server;
    private final Set<Integer> dropped;
    private final AtomicInteger produceRequests = new AtomicInteger();
    /** Answers dropped so far. */
    final AtomicInteger droppedAnswers = new AtomicInteger();

    private final CopyOnWriteArrayList<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile int targetPort;

    LostAckProxy(Set<Integer> dropped) throws IOException {
        this.dropped = Set.copyOf(dropped);
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("lost-ack-proxy").start(this::accept);
    }

    int port() {
        return server.getLocalPort();
    }

    /** Where connections go from now on (the broker's real listener). */
    void target(int port) {
        targetPort = port;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket broker = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(broker);
                Set<Integer> toDrop = ConcurrentHashMap.newKeySet();
                Thread.ofVirtual().start(() -> pump(client, broker, toDrop, true));
                Thread.ofVirtual().start(() -> pump(broker, client, toDrop, false));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /**
     * Copies frames from {@code from} to {@code to}. Requests: a Produce whose number is in {@code
     * dropped} has its correlation id noted. Answers: one with a noted id closes both sockets unsent.
     */
    private void pump(Socket from, Socket to, Set<Integer> toDrop, boolean requests) {
        try (from;
                to) {
            DataInputStream in = new DataInputStream(from.getInputStream());
            DataOutputStream out = new DataOutputStream(to.getOutputStream());
            while (true) {
                int size = in.readInt();
                byte[] frame = new byte[size];
                in.readFully(frame);
                if (requests) {
                    short apiKey = (short) (((frame[0] & 0xff) << 8) | (frame[1] & 0xff));
                    if (apiKey == ApiKeys.PRODUCE && dropped.contains(produceRequests.incrementAndGet())) {
                        toDrop.add(intAt(frame, 6)); // after apiKey, apiVersion, headerVersion
                    }
                } else if (toDrop.contains(intAt(frame, 0))) {
                    droppedAnswers.incrementAndGet();
                    return; // closes both: the client sees the connection drop without its answer
                }
                out.writeInt(size);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            // the other side closed: both sockets close with this pump
        }
    }

    private static int intAt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
