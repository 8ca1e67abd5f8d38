package io.stellflow.server.common.config;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Start-time checks of the ports a node listens on, so that a taken port is one line naming the key,
 * its value, the address and what to do ({@link ConfigException}) instead of the stack traces of the
 * library that binds it (Ratis logs four for a taken Raft port; gRPC's message names no key).
 *
 * <p>Thread-safety: stateless.
 */
public final class ListenPorts {
    private ListenPorts() {}

    /**
     * Binds {@code host:port} and closes it at once, before the real server binds it. {@code
     * SO_REUSEADDR} is set as Netty's servers set it, so a port with only closed connections (TIME_WAIT)
     * passes as it would for them. Port 0 (any free port) is not checked. Another process may still
     * take the port between this check and the real bind; that bind then fails as it did before.
     *
     * @param key the configuration key that names the port, e.g. {@code controller.listener}
     * @param value that key's value as configured
     * @throws ConfigException from {@link #unusable} when the port cannot be bound
     */
    public static void checkFree(String key, String value, String host, int port) {
        if (port == 0) {
            return;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(host, port));
        } catch (IOException e) {
            throw unusable(key, value, host, port, e);
        }
    }

    /**
     * The start error of a port that cannot be bound: {@code key}, its {@code value}, the system's
     * reason and what to do; {@code e} is its cause.
     */
    public static ConfigException unusable(String key, String value, String host, int port, IOException e) {
        String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        String address = host + ":" + port;
        String todo;
        if (reason.contains("Address already in use")) {
            todo = "another process listens on " + address + " (see ss -ltnp 'sport = :" + port
                    + "'): stop it, or give " + key + " another port";
        } else if (reason.contains("Cannot assign requested address")) {
            todo = host + " is not an address of this machine: give " + key + " one of its addresses, or 0.0.0.0";
        } else {
            todo = "give " + key + " a host and port this process may bind";
        }
        ConfigException c =
                new ConfigException(key, value, "cannot listen on " + address + " (" + reason + "); " + todo);
        c.initCause(e);
        return c;
    }
}
