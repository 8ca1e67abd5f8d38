package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

/**
 * {@link ControllerClient#describe}: a failed attempt in an operator's words, without the gRPC
 * status' internals (issue #22: a tool printed {@code Status{code=DEADLINE_EXCEEDED, ...
 * connecting_and_lb_delay ...}}).
 */
class ControllerClientFailureTextTest {

    @Test
    void aRefusedConnectionSaysUnreachableWithTheRootCause() {
        Status refused = Status.UNAVAILABLE
                .withDescription("io exception")
                .withCause(new RuntimeException("wrapper", new ConnectException("Connection refused")));
        assertThat(ControllerClient.describe(refused)).isEqualTo("unreachable (Connection refused)");
        assertThat(ControllerClient.describe(Status.UNAVAILABLE)).isEqualTo("unreachable");
    }

    @Test
    void aDeadlineSaysSoWithoutResolverOrBalancerTimings() {
        Status deadline = Status.DEADLINE_EXCEEDED.withDescription(
                "CallOptions deadline exceeded after 0.84s. Name resolution delay 0.0 seconds. [closed=[], open=[["
                        + "connecting_and_lb_delay=847366476ns, was_still_waiting]]]");
        String text = ControllerClient.describe(deadline);
        assertThat(text).isEqualTo("no answer within the attempt deadline");
        assertThat(text).doesNotContain("Status{", "connecting_and_lb_delay");
    }

    @Test
    void otherCodesAreNamed() {
        assertThat(ControllerClient.describe(Status.CANCELLED)).isEqualTo("call cancelled");
        assertThat(ControllerClient.describe(Status.RESOURCE_EXHAUSTED)).isEqualTo("controller overloaded");
        assertThat(ControllerClient.describe(Status.UNKNOWN.withCause(new IllegalStateException("boom"))))
                .isEqualTo("UNKNOWN (boom)");
    }
}
