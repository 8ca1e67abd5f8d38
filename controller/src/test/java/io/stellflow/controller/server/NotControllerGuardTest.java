package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.ControllerLeader;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterControllerRecord;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class NotControllerGuardTest {
    private static final int SELF = 1;

    private final AtomicInteger served = new AtomicInteger();

    private DescribeConfigsResponse ask(NotControllerGuard guard) {
        return guard.answer(
                "request",
                req -> {
                    served.incrementAndGet();
                    return DescribeConfigsResponse.getDefaultInstance();
                },
                (e, m, l) -> DescribeConfigsResponse.newBuilder()
                        .setError(e)
                        .setErrorMessage(m)
                        .setLeader(l)
                        .build());
    }

    private static FakeQuorum withControllerEndpoint(int leaderId, int controllerId, int port) {
        return new FakeQuorum(leaderId)
                .with(List.of(MetadataRecords.of(RegisterControllerRecord.newBuilder()
                        .setControllerId(controllerId)
                        .setEndpoint(new BrokerEndpoint("CONTROLLER", "127.0.0.1", port).toProto())
                        .build())));
    }

    @Test
    void theActiveControllerServesTheRequest() {
        NotControllerGuard guard = new NotControllerGuard(SELF, new FakeQuorum(SELF));
        assertThat(ask(guard)).isEqualTo(DescribeConfigsResponse.getDefaultInstance());
        assertThat(served).hasValue(1);
    }

    @Test
    void aFollowerRedirectsToTheLeaderWithItsEndpointAndServesNothing() {
        FakeQuorum q = withControllerEndpoint(2, 2, 9192);
        q.active = false;
        DescribeConfigsResponse r = ask(new NotControllerGuard(SELF, q));
        assertThat(served).hasValue(0);
        assertThat(r.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(r.getErrorMessage()).isEqualTo("this controller is not active; leader is 2");
        assertThat(r.getLeader().getLeaderId()).isEqualTo(2);
        assertThat(r.getLeader().getEndpoint().getPort()).isEqualTo(9192);
    }

    @Test
    void duringAnElectionTheLeaderIsUnknown() {
        FakeQuorum q = new FakeQuorum(-1);
        q.active = false;
        DescribeConfigsResponse r = ask(new NotControllerGuard(SELF, q));
        assertThat(r.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(r.getErrorMessage()).endsWith("leader is unknown (election in progress)");
        assertThat(r.getLeader())
                .isEqualTo(ControllerLeader.newBuilder().setLeaderId(-1).build());
    }

    @Test
    void aLeaderThatIsNotReadyNamesItselfWithoutAnEndpointSoCallersDoNotRetryHereAtOnce() {
        FakeQuorum q = withControllerEndpoint(SELF, SELF, 9191);
        q.active = false;
        ControllerLeader l = ask(new NotControllerGuard(SELF, q)).getLeader();
        assertThat(l.getLeaderId()).isEqualTo(SELF);
        assertThat(l.hasEndpoint()).isFalse();
    }

    @Test
    void aLeaderWhoseEndpointIsNotInTheImageYetIsNamedWithoutOne() {
        FakeQuorum q = new FakeQuorum(3);
        q.active = false;
        ControllerLeader l = ask(new NotControllerGuard(SELF, q)).getLeader();
        assertThat(l.getLeaderId()).isEqualTo(3);
        assertThat(l.hasEndpoint()).isFalse();
    }

    @Test
    void aReadyLeaderServesNothingUntilItsActivationIsCommitted() {
        FakeQuorum q = withControllerEndpoint(SELF, SELF, 9191);
        NotControllerGuard guard = new NotControllerGuard(SELF, q);
        guard.activationPending(true);
        assertThat(guard.isActive()).isFalse();
        assertRedirectsToItself(guard, false, "callers wait instead of retrying here at once");

        guard.activationPending(false);
        assertThat(ask(guard)).isEqualTo(DescribeConfigsResponse.getDefaultInstance());
        assertThat(served).hasValue(1);
    }

    @Test
    void afterCloseEvenTheActiveControllerRedirects() {
        FakeQuorum q = withControllerEndpoint(SELF, SELF, 9191);
        NotControllerGuard guard = new NotControllerGuard(SELF, q);
        assertThat(guard.isClosed()).isFalse();
        guard.close();
        assertThat(guard.isClosed()).isTrue();
        assertThat(guard.isActive()).isFalse();
        assertRedirectsToItself(guard, true, "the image still names this node");
    }

    /** {@code guard} serves nothing and answers NOT_CONTROLLER naming this node, with or without its endpoint. */
    private void assertRedirectsToItself(NotControllerGuard guard, boolean withEndpoint, String why) {
        DescribeConfigsResponse r = ask(guard);
        assertThat(served).hasValue(0);
        assertThat(r.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(r.getLeader().getLeaderId()).isEqualTo(SELF);
        assertThat(r.getLeader().hasEndpoint()).as(why).isEqualTo(withEndpoint);
    }
}
