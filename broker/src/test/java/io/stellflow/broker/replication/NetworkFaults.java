package io.stellflow.broker.replication;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Network cuts between the processes of a test cluster without root or iptables: every broker
 * advertises the port of a {@link Proxy} in front of its real listener, and reaches the controller
 * through a proxy of its own, so every broker-to-broker and broker-to-controller byte crosses a proxy
 * in this JVM. {@link #isolate} cuts one broker from the other brokers and from the controller (and,
 * if asked, from the test's clients): the connections concerned stop forwarding (bytes are held, as a
 * dropped link would), new ones are accepted and never served (a black hole, not a refusal); {@link
 * #heal} closes every connection the cut touched, as TCP timeouts would have, and new connections
 * pass again.
 *
 * <p>Who is on the other end of a connection into a broker's proxy is found with {@link SocketOwners}
 * (the pid owning the connecting socket among the broker pids); connections from any other process
 * (this test JVM) are clients.
 *
 * <p>Thread-safety: thread-safe; each proxy runs an acceptor thread and two virtual pump threads per
 * connection.
 */
final class NetworkFaults implements AutoCloseable {
    /** Source or target node of a connection that is not a broker: a test client. */
    static final int CLIENT = -1;
    /** Target node of a broker's controller proxy. */
    static final int CONTROLLER = -2;

    private final Supplier<long[]> brokerPids;
    private final List<Proxy> proxies = new ArrayList<>();
    private volatile int isolated = -1;
    private volatile boolean clientsCut;
    /** Heals so far; a connection accepted during a cut and registered after its heal is closed too. */
    private volatile long heals;

    /** @param brokerPids the pid of broker index i at index i (-1 when it is down), read on each accept */
    NetworkFaults(Supplier<long[]> brokerPids) {
        this.brokerPids = brokerPids;
    }

    /** A proxy to a broker's listener at {@code targetPort}; {@code brokerIndex} names that broker. */
    synchronized Proxy brokerProxy(int brokerIndex, int targetPort) throws IOException {
        Proxy p = new Proxy(brokerIndex, CLIENT - 100, targetPort);
        proxies.add(p);
        return p;
    }

    /** The proxy through which broker {@code brokerIndex} alone reaches the controller at {@code targetPort}. */
    synchronized Proxy controllerProxy(int brokerIndex, int targetPort) throws IOException {
        Proxy p = new Proxy(CONTROLLER, brokerIndex, targetPort);
        proxies.add(p);
        return p;
    }

    /**
     * Cuts broker {@code brokerIndex} from the other brokers and the controller; with {@code
     * clientsToo} also from test clients. One cut at a time: a second isolate replaces the first
     * after healing it.
     */
    void isolate(int brokerIndex, boolean clientsToo) {
        if (isolated >= 0) {
            heal();
        }
        clientsCut = clientsToo;
        isolated = brokerIndex;
    }

    /** Ends the cut: every connection it blocked is closed, new connections pass. */
    void heal() {
        List<Proxy.Conn> toClose = new ArrayList<>();
        synchronized (this) {
            heals++; // before the list is taken: see Proxy.serve
            for (Proxy p : proxies) {
                for (Proxy.Conn c : p.conns) {
                    if (blocked(c.source, p.target)) {
                        toClose.add(c);
                    }
                }
            }
        }
        // Closed before the cut is lifted: a pump holding bytes of a cut connection must see it
        // closed, not the link healed, or it would deliver what the cut held (a CI run saw a held
        // byte echoed after heal).
        for (Proxy.Conn c : toClose) {
            c.close();
        }
        isolated = -1;
    }

    int isolated() {
        return isolated;
    }

    private boolean blocked(int source, int target) {
        return blocked(isolated, clientsCut, source, target);
    }

    /** Whether the cut of broker {@code iso} (none when negative) blocks source -> target. */
    private static boolean blocked(int iso, boolean clientsCut, int source, int target) {
        if (iso < 0) {
            return false;
        }
        if (source == CLIENT) {
            return clientsCut && target == iso;
        }
        if (target == CONTROLLER) {
            return source == iso;
        }
        return (source == iso) != (target == iso);
    }

    private int brokerIndexOf(long pid) {
        long[] pids = brokerPids.get();
        for (int i = 0; i < pids.length; i++) {
            if (pids[i] == pid) {
                return i;
            }
        }
        return CLIENT;
    }

    @Override
    public synchronized void close() {
        for (Proxy p : proxies) {
            p.close();
        }
        proxies.clear();
    }

    /** One listening proxy: 127.0.0.1:{@link #port()} forwards to 127.0.0.1:targetPort. */
    final class Proxy implements AutoCloseable {
        final int target;
        private final int fixedSource;
        private final int targetPort;
        private final ServerSocket server;
        final Set<Conn> conns = ConcurrentHashMap.newKeySet();
        private volatile boolean closed;

        /** @param fixedSource the source node of every connection, or {@code CLIENT - 100} to look it up */
        private Proxy(int target, int fixedSource, int targetPort) throws IOException {
            this.target = target;
            this.fixedSource = fixedSource;
            this.targetPort = targetPort;
            this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().name("proxy-accept-" + server.getLocalPort()).start(this::acceptLoop);
        }

        int port() {
            return server.getLocalPort();
        }

        private void acceptLoop() {
            while (!closed) {
                Socket s;
                try {
                    s = server.accept();
                } catch (IOException e) {
                    return;
                }
                Thread.ofVirtual().start(() -> serve(s));
            }
        }

        private void serve(Socket downstream) {
            long healsAtAccept = heals;
            int cutAtAccept = isolated;
            boolean clientsCutAtAccept = clientsCut;
            int source = fixedSource;
            if (source == CLIENT - 100) {
                long[] pids = brokerPids.get();
                List<Long> candidates = new ArrayList<>();
                for (long pid : pids) {
                    if (pid > 0) {
                        candidates.add(pid);
                    }
                }
                long owner = SocketOwners.ownerOf(downstream.getPort(), port(), candidates);
                source = owner > 0 ? brokerIndexOf(owner) : CLIENT;
            }
            Socket upstream = new Socket();
            try {
                downstream.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2000);
            } catch (IOException e) {
                closeQuietly(downstream);
                closeQuietly(upstream);
                return; // target down: the connecting side sees the connection closed
            }
            Conn c = new Conn(source, downstream, upstream);
            conns.add(c);
            // A heal that took its list before this connection was registered did not close it;
            // a connection its cut blocked is closed here instead, as the heal would have.
            if (closed || (heals != healsAtAccept && blocked(cutAtAccept, clientsCutAtAccept, source, target))) {
                c.close();
                return;
            }
            Thread.ofVirtual().start(() -> c.pump(downstream, upstream));
            c.pump(upstream, downstream);
        }

        @Override
        public void close() {
            closed = true;
            closeQuietly(server);
            for (Conn c : conns) {
                c.close();
            }
        }

        /** One proxied connection. */
        final class Conn {
            final int source;
            private final Socket downstream;
            private final Socket upstream;
            private volatile boolean connClosed;

            Conn(int source, Socket downstream, Socket upstream) {
                this.source = source;
                this.downstream = downstream;
                this.upstream = upstream;
            }

            void pump(Socket from, Socket to) {
                byte[] buf = new byte[64 * 1024];
                try (InputStream in = from.getInputStream();
                        OutputStream out = to.getOutputStream()) {
                    while (true) {
                        int n = in.read(buf);
                        if (n < 0) {
                            break;
                        }
                        while (blocked(source, target) && !connClosed) {
                            Thread.sleep(5); // held, as on a dropped link
                        }
                        if (connClosed) {
                            break;
                        }
                        out.write(buf, 0, n);
                    }
                } catch (IOException | InterruptedException e) {
                    // peer closed or reset: close both sides below
                } finally {
                    close();
                }
            }

            void close() {
                connClosed = true;
                conns.remove(this);
                closeQuietly(downstream);
                closeQuietly(upstream);
            }
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // closing a socket that is already broken: nothing to do
        }
    }
}
