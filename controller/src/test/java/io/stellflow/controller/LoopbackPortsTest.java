package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link LoopbackPorts}: ports below the kernel's ephemeral range, distinct, bindable, in-use ones skipped. */
@IntegrationTest
class LoopbackPortsTest {
    @Test
    void picksDistinctBindablePortsBelowTheEphemeralRange() throws IOException {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        assumeThat(Files.isReadable(range)).as("Linux's ephemeral port range").isTrue();
        int ephemeralLow =
                Integer.parseInt(Files.readAllLines(range).get(0).trim().split("\\s+")[0]);
        assumeThat(ephemeralLow - LoopbackPorts.LOW).as("room below the range").isGreaterThanOrEqualTo(1000);
        Set<Integer> seen = new HashSet<>();
        for (int round = 0; round < 20; round++) {
            for (int port : LoopbackPorts.pick(5)) {
                assertThat(port).isBetween(LoopbackPorts.LOW, ephemeralLow - 1);
                assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
                try (ServerSocket s = new ServerSocket()) {
                    s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                }
            }
        }
        assertThat(seen).hasSize(100);
    }

    @Test
    void aPortInUseIsSkipped() throws IOException {
        int first = LoopbackPorts.pick();
        // The next candidate is first + 1 (or the start of the range after a wrap): hold it.
        int held = first + 1;
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), held), 1);
            int next = LoopbackPorts.pick();
            assertThat(next).isNotEqualTo(held).isNotEqualTo(first);
        } catch (java.net.BindException elsewhere) {
            // someone else holds first + 1 already: the pick below must skip it all the same
            assertThat(LoopbackPorts.pick()).isNotEqualTo(held);
        }
    }
}
