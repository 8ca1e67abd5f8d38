package io.stellflow.controller;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TCP ports on 127.0.0.1 that are free now, for addresses that must be known before the server that
 * binds them starts: the Raft port of a single node whose listener is on port 0, and the ports of
 * test clusters.
 *
 * <p>A port the kernel hands out for {@code bind(0)} lies in its ephemeral range, the range every
 * outgoing connection of every process also draws its local port from, so it can be taken between
 * the pick and the bind. Ports are therefore taken below that range (Linux: {@code
 * /proc/sys/net/ipv4/ip_local_port_range}, typically 32768-60999), from {@value #LOW} up, each
 * checked by binding it once; successive picks in one JVM walk the range from a per-process starting
 * point, so a port is not handed out twice until the range wraps. Where the range cannot be read or
 * leaves fewer than 1000 ports below it, the kernel's {@code bind(0)} is used.
 *
 * <p>Thread-safety: thread-safe (picks are serialised).
 */
public final class LoopbackPorts {
    /** Lowest port handed out: above the registered services commonly found on a development box. */
    static final int LOW = 20_000;

    private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int HIGH_EXCLUSIVE = ephemeralLow();
    private static int next = LOW + (int) (ProcessHandle.current().pid() * 7919 % Math.max(1, HIGH_EXCLUSIVE - LOW));

    private LoopbackPorts() {}

    /**
     * {@code n} distinct ports that could be bound on 127.0.0.1 at the time of the call.
     *
     * @throws IOException when no port in the range can be bound (or, in the fallback, bind(0) fails)
     */
    public static synchronized int[] pick(int n) throws IOException {
        int[] ports = new int[n];
        if (HIGH_EXCLUSIVE - LOW < 1000) {
            ServerSocket[] held = new ServerSocket[n];
            try {
                for (int i = 0; i < n; i++) {
                    held[i] = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                    ports[i] = held[i].getLocalPort(); // all held until the last: distinct
                }
            } finally {
                for (ServerSocket s : held) {
                    if (s != null) {
                        s.close();
                    }
                }
            }
            return ports;
        }
        int span = HIGH_EXCLUSIVE - LOW;
        for (int i = 0; i < n; i++) {
            for (int tries = 0; ; tries++) {
                if (tries == span) {
                    throw new IOException("no free port on 127.0.0.1 in " + LOW + ".." + (HIGH_EXCLUSIVE - 1));
                }
                int candidate = next;
                next = candidate + 1 >= HIGH_EXCLUSIVE ? LOW : candidate + 1;
                if (bindable(candidate)) {
                    ports[i] = candidate;
                    break;
                }
            }
        }
        return ports;
    }

    /** One port, as {@link #pick}{@code (1)}. */
    public static int pick() throws IOException {
        return pick(1)[0];
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false); // a port still in TIME_WAIT is skipped, not handed out
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The first port of the kernel's ephemeral range, or {@link #LOW} (use bind(0)) when unknown. */
    private static int ephemeralLow() {
        try {
            // readAllLines: readString trusts the size procfs reports and returns a cut line
            String[] parts = Files.readAllLines(RANGE, StandardCharsets.US_ASCII)
                    .get(0)
                    .trim()
                    .split("\\s+");
            return Integer.parseInt(parts[0]);
        } catch (IOException | RuntimeException e) {
            return LOW;
        }
    }
}
