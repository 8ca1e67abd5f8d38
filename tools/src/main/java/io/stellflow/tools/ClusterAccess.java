package io.stellflow.tools;

import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.proto.BrokerDescription;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a tool reaches the cluster, with Kafka's meaning of the two flags: {@code --bootstrap-server}
 * takes brokers (the data plane), {@code --bootstrap-controller} takes controllers (the gRPC control
 * plane). Each address is probed first ({@link PortProbe}), so an address of the wrong kind fails at
 * once with an error naming it ({@code 127.0.0.1:9094 is a control-plane port; use
 * --bootstrap-controller or a broker address}), and an address nothing listens on fails at once too.
 *
 * <p>The other plane is found through the one given: from brokers, the controllers they use
 * (DescribeControllers, apiKey 60); from controllers, the PLAINTEXT listeners of the unfenced
 * registered brokers (DescribeCluster). Both clients are opened on first use and closed by {@link
 * #close}.
 *
 * <p>Thread-safety: confined to the command's thread.
 */
final class ClusterAccess implements AutoCloseable {
    /** The longest a probe waits for a connection, then for the first answer bytes. */
    static final int MAX_PROBE_MS = 3_000;

    private final List<String> brokerAddresses;
    private final List<String> controllerAddresses;
    private final long timeoutMs;
    private final Map<String, String> clientProps;
    private ControllerClient controllers;
    private StellflowAdmin brokers;

    private ClusterAccess(
            List<String> brokerAddresses, List<String> controllerAddresses, long timeoutMs, Map<String, String> props) {
        this.brokerAddresses = brokerAddresses;
        this.controllerAddresses = controllerAddresses;
        this.timeoutMs = timeoutMs;
        this.clientProps = props;
    }

    /**
     * Checks the addresses of whichever flag was given and returns the access through them.
     *
     * @param bootstrapServer {@code --bootstrap-server} (brokers), or null
     * @param bootstrapController {@code --bootstrap-controller} (controllers), or null; exactly one of
     *     the two is non-null (the caller checked)
     * @param timeoutMs how long a controller call may take, retries included
     * @param clientProps extra client properties for the broker client, or null
     * @throws BootstrapException when an address is of the other kind, no address is reachable, or
     *     one is not {@code host:port}
     */
    static ClusterAccess open(
            String bootstrapServer, String bootstrapController, long timeoutMs, Map<String, String> clientProps) {
        int probeMs = (int) Math.max(1, Math.min(MAX_PROBE_MS, timeoutMs));
        if (bootstrapServer != null) {
            return new ClusterAccess(checkBrokers(split(bootstrapServer), probeMs), null, timeoutMs, clientProps);
        }
        return new ClusterAccess(null, checkControllers(split(bootstrapController), probeMs), timeoutMs, clientProps);
    }

    /** The reachable broker addresses, in the order given; every address is a data-plane port. */
    private static List<String> checkBrokers(List<String> addresses, int probeMs) {
        List<String> reachable = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (String a : addresses) {
            PortProbe.Result r = probe(a, probeMs);
            switch (r.kind()) {
                case DATA_PLANE -> reachable.add(a);
                case CONTROL_PLANE -> throw new BootstrapException(controlPlaneGivenAsBroker(a));
                case UNREACHABLE, OTHER -> failures.add(a + ": " + r.detail());
            }
        }
        if (reachable.isEmpty()) {
            throw new BootstrapException("no broker reachable at --bootstrap-server " + String.join(",", addresses)
                    + " (" + String.join("; ", failures) + ")");
        }
        return reachable;
    }

    /**
     * The controller addresses, in the order given; none is a data-plane port and at least one
     * answers (the others may be down: the controller client tries them all).
     */
    private static List<String> checkControllers(List<String> addresses, int probeMs) {
        List<String> failures = new ArrayList<>();
        boolean anyUp = false;
        for (String a : addresses) {
            PortProbe.Result r = probe(a, probeMs);
            switch (r.kind()) {
                case CONTROL_PLANE -> anyUp = true;
                case DATA_PLANE ->
                    throw new BootstrapException(a + " is a broker (data-plane) port; use --bootstrap-server or a"
                            + " controller address (controller.listener)");
                case UNREACHABLE, OTHER -> failures.add(a + ": " + r.detail());
            }
        }
        if (!anyUp) {
            throw new BootstrapException("no controller reachable at --bootstrap-controller "
                    + String.join(",", addresses) + " (" + String.join("; ", failures) + ")");
        }
        return addresses;
    }

    private static String controlPlaneGivenAsBroker(String address) {
        return address + " is a control-plane port (a controller); use --bootstrap-controller or a broker address";
    }

    /**
     * After a tool's client failed to reach {@code bootstrapServer}: the reason when one address is a
     * control-plane port or names an unknown host (the same words as {@link #open}), else null. For
     * tools that talk to the brokers without {@link #open} (consumer groups); probes each address for
     * at most {@code probeMs}.
     */
    static String misdirectedBrokers(String bootstrapServer, int probeMs) {
        for (String a : split(bootstrapServer)) {
            PortProbe.Result r;
            try {
                r = PortProbe.probe(a, probeMs);
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
            if (r.kind() == PortProbe.Kind.CONTROL_PLANE) {
                return controlPlaneGivenAsBroker(a);
            }
            if (r.kind() == PortProbe.Kind.UNREACHABLE && r.detail().startsWith(PortProbe.UNKNOWN_HOST)) {
                return a + ": " + r.detail();
            }
        }
        return null;
    }

    private static PortProbe.Result probe(String address, int probeMs) {
        try {
            return PortProbe.probe(address, probeMs);
        } catch (IllegalArgumentException e) {
            throw new BootstrapException(e.getMessage());
        }
    }

    private static List<String> split(String list) {
        List<String> out = new ArrayList<>();
        for (String s : list.split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        if (out.isEmpty()) {
            throw new BootstrapException("no address given");
        }
        return out;
    }

    /**
     * The client of the controller quorum: on the given controllers, or on those the first reachable
     * broker uses.
     *
     * @throws BootstrapException when the broker cannot say (it did not answer, or has no such API)
     */
    ControllerClient controllers() {
        if (controllers == null) {
            List<String> endpoints = controllerAddresses;
            if (endpoints == null) {
                try {
                    endpoints = brokers().describeControllers();
                } catch (StellflowException e) {
                    throw new BootstrapException("cannot learn the controllers from broker " + brokerAddresses.get(0)
                            + ": " + e.getMessage() + "; give --bootstrap-controller");
                }
                if (endpoints.isEmpty()) {
                    throw new BootstrapException(
                            "broker " + brokerAddresses.get(0) + " named no controller; give --bootstrap-controller");
                }
            }
            controllers = ControllerClient.builder(endpoints)
                    .requestTimeout(Duration.ofMillis(timeoutMs))
                    .build();
        }
        return controllers;
    }

    /**
     * The broker client: on the given brokers, or on the unfenced brokers registered with the given
     * controllers.
     *
     * @throws BootstrapException when the controllers know no unfenced broker
     */
    StellflowAdmin brokers() {
        if (brokers == null) {
            List<String> addresses = brokerAddresses;
            if (addresses == null) {
                addresses = registeredBrokers();
            }
            brokers = new StellflowAdmin(ClientProps.of(String.join(",", addresses), clientProps));
        }
        return brokers;
    }

    private List<String> registeredBrokers() {
        DescribeClusterResponse r = controllers().describeCluster();
        if (r.getError() != ErrorCode.NONE) {
            throw new BootstrapException("DescribeCluster refused: " + r.getError() + " " + r.getErrorMessage());
        }
        List<String> addresses = new ArrayList<>();
        for (BrokerDescription b : r.getBrokersList()) {
            if (!b.getFenced() && b.getListenersCount() > 0) {
                var l = b.getListeners(0);
                addresses.add((l.getHost().contains(":") ? "[" + l.getHost() + "]" : l.getHost()) + ":" + l.getPort());
            }
        }
        if (addresses.isEmpty()) {
            throw new BootstrapException(
                    "the controllers know no unfenced broker to send this to; give --bootstrap-server");
        }
        return addresses;
    }

    @Override
    public void close() {
        if (brokers != null) {
            brokers.close();
        }
        if (controllers != null) {
            controllers.close();
        }
    }

    /** A bootstrap address that cannot be used, with the reason; the tools print it and exit 1. */
    static final class BootstrapException extends RuntimeException {
        BootstrapException(String message) {
            super(message);
        }
    }
}
