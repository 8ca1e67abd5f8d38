package io.stellflow.broker.replication;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Which local process owns the client end of a loopback TCP connection, from Linux's {@code
 * /proc/net/tcp}, {@code /proc/net/tcp6} and {@code /proc/<pid>/fd}: a proxy that accepted a
 * connection from {@code 127.0.0.1:clientPort} finds the socket inode of the line whose local port is
 * {@code clientPort} and whose remote port is the proxy's port, then the candidate process holding
 * {@code socket:[inode]}. Needs no privileges for processes of the same user (or root).
 *
 * <p>Why: every broker connects to the others from 127.0.0.1 with an ephemeral port, so the address
 * alone cannot tell a broker's fetcher from a test client; the owning pid can.
 *
 * <p>Thread-safety: stateless.
 */
final class SocketOwners {
    private SocketOwners() {}

    /** True when this machine exposes {@code /proc/net/tcp} (Linux). */
    static boolean supported() {
        return Files.isReadable(Path.of("/proc/net/tcp"));
    }

    /**
     * The pid among {@code candidatePids} owning the socket connected from loopback port {@code
     * clientPort} to port {@code serverPort}, or -1 when none does (or the lookup fails).
     */
    static long ownerOf(int clientPort, int serverPort, List<Long> candidatePids) {
        long inode = inodeOf(clientPort, serverPort);
        if (inode <= 0) {
            return -1;
        }
        String target = "socket:[" + inode + "]";
        for (long pid : candidatePids) {
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
                for (Path fd : fds) {
                    try {
                        if (Files.readSymbolicLink(fd).toString().equals(target)) {
                            return pid;
                        }
                    } catch (IOException e) {
                        // fd closed between the listing and the readlink: not this one
                    }
                }
            } catch (IOException e) {
                // process gone: not the owner
            }
        }
        return -1;
    }

    /** The inode of the socket with local port {@code localPort} and remote port {@code remotePort}. */
    static long inodeOf(int localPort, int remotePort) {
        for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (IOException e) {
                continue;
            }
            for (int i = 1; i < lines.size(); i++) {
                String[] f = lines.get(i).trim().split("\\s+");
                if (f.length < 10) {
                    continue;
                }
                if (port(f[1]) == localPort && port(f[2]) == remotePort) {
                    long inode = Long.parseLong(f[9]);
                    if (inode > 0) {
                        return inode;
                    }
                }
            }
        }
        return -1;
    }

    private static int port(String hexAddress) {
        int colon = hexAddress.lastIndexOf(':');
        return Integer.parseInt(hexAddress.substring(colon + 1), 16);
    }
}
