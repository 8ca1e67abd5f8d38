package io.stellflow.controller;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One voter of {@code controller.quorum.voters}: {@code id@host:port}, where the port is the
 * controller's Raft (Ratis) port.
 *
 * @param id controller node id (its {@code node.id})
 * @param host host name or IP literal (IPv6 in brackets: {@code 1@[::1]:9093})
 * @param raftPort TCP port of the Ratis transport, 1..65535
 */
public record QuorumVoter(int id, String host, int raftPort) {

    /** {@code host:raftPort}. */
    public String raftAddress() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + raftPort;
    }

    /**
     * Parses {@code 1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097}: 1, 3 or 5 voters with
     * distinct ids and addresses.
     *
     * @throws IllegalArgumentException naming the bad entry
     */
    public static List<QuorumVoter> parseList(String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("controller.quorum.voters is empty");
        }
        List<QuorumVoter> voters = new ArrayList<>();
        Set<Integer> ids = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        for (String raw : value.split(",")) {
            QuorumVoter v = parse(raw.trim());
            if (!ids.add(v.id())) {
                throw new IllegalArgumentException("controller.quorum.voters: duplicate id " + v.id());
            }
            if (!addresses.add(v.raftAddress())) {
                throw new IllegalArgumentException("controller.quorum.voters: duplicate address " + v.raftAddress());
            }
            voters.add(v);
        }
        int n = voters.size();
        if (n != 1 && n != 3 && n != 5) {
            throw new IllegalArgumentException(
                    "controller.quorum.voters lists " + n + " voters; use 1, 3 or 5 (an odd quorum)");
        }
        return List.copyOf(voters);
    }

    /** Parses one {@code id@host:port}. */
    public static QuorumVoter parse(String entry) {
        int at = entry.indexOf('@');
        int colon = entry.lastIndexOf(':');
        if (at <= 0 || colon < at + 2 || colon == entry.length() - 1) {
            throw new IllegalArgumentException("controller.quorum.voters entry '" + entry + "' is not id@host:port");
        }
        int id;
        int port;
        try {
            id = Integer.parseInt(entry.substring(0, at));
            port = Integer.parseInt(entry.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("controller.quorum.voters entry '" + entry + "' is not id@host:port");
        }
        String host = entry.substring(at + 1, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (id < 0 || port < 1 || port > 65535 || host.isEmpty()) {
            throw new IllegalArgumentException(
                    "controller.quorum.voters entry '" + entry + "': id must be >= 0 and port 1..65535");
        }
        return new QuorumVoter(id, host, port);
    }

    @Override
    public String toString() {
        return id + "@" + raftAddress();
    }
}
