package io.stellflow.broker;

import io.stellflow.broker.network.Transport;
import io.stellflow.broker.network.TransportType;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * The transports of multi-broker tests. A cluster does not run once per transport (that would triple
 * the slowest tests of the suite); its brokers rotate over the transports instead, broker index
 * {@code i} on {@code rotation().get((i + offset) % rotation().size())}, so a three-broker test has a
 * leader and followers on nio, epoll and io_uring at once, and a follower fetches across transports
 * (epoll {@code sendfile} to an io_uring fetcher, io_uring {@code splice} to a NIO one, ...).
 *
 * <p>{@code -Dstellflow.test.transports=nio} (or a comma list such as {@code epoll,io_uring}) runs
 * every cluster on the given transports only, a single-transport pass for an operator; a listed
 * transport that is unavailable here skips the test, as {@link TestBroker#props} does. The default
 * rotation is every transport available here, the others are dropped with a line on stdout. Tests
 * parameterized over the transports skip the unlisted ones ({@link #assumeSelected}).
 * {@code -Dstellflow.test.transports.offset=k} shifts the rotation (which broker gets which).
 *
 * <p>Thread-safety: stateless.
 */
public final class TestTransports {
    /** System property with a comma list of transports; unset or blank: the default rotation. */
    public static final String PROPERTY = "stellflow.test.transports";
    /** System property shifting the rotation by k brokers; default 0. */
    public static final String OFFSET_PROPERTY = "stellflow.test.transports.offset";

    private static final List<TransportType> ALL =
            List.of(TransportType.NIO, TransportType.EPOLL, TransportType.IO_URING);

    private TestTransports() {}

    /**
     * The transports brokers rotate over: the {@value #PROPERTY} list, or every available one.
     *
     * @throws org.opentest4j.TestAbortedException when a listed transport is unavailable here
     */
    public static List<String> rotation() {
        String listed = System.getProperty(PROPERTY, "").trim();
        List<String> out = new ArrayList<>();
        if (listed.isEmpty()) {
            for (TransportType t : ALL) {
                if (Transport.isAvailable(t)) {
                    out.add(t.configName());
                } else {
                    System.out.println("test transports: " + t.configName() + " unavailable here, not rotated");
                }
            }
            return out;
        }
        for (String name : listed.split(",")) {
            TransportType t = TransportType.parse(PROPERTY, name.trim());
            if (t == TransportType.AUTO) {
                throw new IllegalArgumentException(PROPERTY + " lists auto; name concrete transports: " + listed);
            }
            Assumptions.assumeTrue(Transport.isAvailable(t), t.configName() + " is unavailable");
            out.add(t.configName());
        }
        return out;
    }

    /**
     * Skips the calling test unless {@code transport} runs here and, when {@value #PROPERTY} is set, is
     * listed there: a test parameterized over the transports then runs only the operator's pass.
     */
    public static void assumeSelected(String transport) {
        TransportType type = TransportType.parse("transport", transport);
        Assumptions.assumeTrue(Transport.isAvailable(type), transport + " is unavailable");
        String listed = System.getProperty(PROPERTY, "").trim();
        if (!listed.isEmpty()) {
            boolean selected = false;
            for (String name : listed.split(",")) {
                selected |= TransportType.parse(PROPERTY, name.trim()) == type;
            }
            Assumptions.assumeTrue(selected, transport + " is not in -D" + PROPERTY + "=" + listed);
        }
    }

    /** The {@code transport} setting of broker index {@code index} in a cluster using {@code rotation}. */
    public static String forBroker(List<String> rotation, int index) {
        int offset = Integer.getInteger(OFFSET_PROPERTY, 0);
        return rotation.get(Math.floorMod(index + offset, rotation.size()));
    }

    /** The transports of brokers 0..{@code brokers}-1, e.g. {@code [nio, epoll, io_uring]}. */
    public static String[] forBrokers(int brokers) {
        List<String> rotation = rotation();
        String[] out = new String[brokers];
        for (int i = 0; i < brokers; i++) {
            out[i] = forBroker(rotation, i);
        }
        return out;
    }

    /**
     * One line naming each broker's transport, e.g. {@code ClusterTest transports: broker 1=nio, broker
     * 2=epoll, broker 3=io_uring}; printed to stdout by the clusters (surefire's {@code *-output.txt}).
     */
    public static String describe(String cluster, String[] transports, int firstBrokerId) {
        StringBuilder sb = new StringBuilder(cluster).append(" transports: ");
        for (int i = 0; i < transports.length; i++) {
            sb.append(i == 0 ? "" : ", ")
                    .append("broker ")
                    .append(firstBrokerId + i)
                    .append('=')
                    .append(transports[i]);
        }
        return sb.toString();
    }
}
