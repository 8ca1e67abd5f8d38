package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.transaction.TxnForwarder.Forward;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link ForwardGate}: a client's own request with nothing in front runs at once; a forwarded one
 * runs only after its forwarding broker said the client is still connected, and is refused when it
 * said closed, could not be asked or did not answer in time; the requests of its id that arrive
 * during the check wait and run after it, in arrival order, each forwarded one after its own check;
 * other ids are not held; beyond the bound a request is refused at once.
 */
class ForwardGateTest {
    private static final Forward FROM_2 = new Forward(2, 7);
    private static final Forward FROM_3 = new Forward(3, 9);

    private record Asked(int brokerId, long forwardId, CompletableFuture<Boolean> answer) {}

    private final List<Asked> asked = Collections.synchronizedList(new ArrayList<>());
    private final List<String> events = Collections.synchronizedList(new ArrayList<>());

    private ForwardGate gate(long checkTimeoutMs, int maxWaiting) {
        return new ForwardGate(
                (broker, forwardId) -> {
                    CompletableFuture<Boolean> f = new CompletableFuture<>();
                    asked.add(new Asked(broker, forwardId, f));
                    return f;
                },
                Runnable::run,
                checkTimeoutMs,
                maxWaiting);
    }

    private void submit(ForwardGate gate, String id, Forward forward, String name) {
        gate.submit(id, forward, () -> events.add("run " + name), () -> events.add("refuse " + name));
    }

    @Test
    void aClientsOwnRequestWithNothingInFrontRunsAtOnceWithoutACheck() {
        ForwardGate gate = gate(30_000, 4);
        submit(gate, "tx", null, "begin");
        assertThat(events).containsExactly("run begin");
        assertThat(asked).isEmpty();
        assertThat(gate.gatedIds()).isZero();
    }

    @Test
    void aBeginArrivingDuringTheCheckOfAForwardedEndRunsAfterItWhenTheClientIsGone() {
        ForwardGate gate = gate(30_000, 4);
        submit(gate, "tx", FROM_2, "end-N");
        assertThat(asked).hasSize(1);
        assertThat(asked.get(0).brokerId()).isEqualTo(2);
        assertThat(asked.get(0).forwardId()).isEqualTo(7);
        submit(gate, "tx", null, "begin-N+1");
        submit(gate, "other", null, "begin-other");
        assertThat(events).as("only the other id runs meanwhile").containsExactly("run begin-other");
        assertThat(gate.waiting()).isEqualTo(1);

        asked.get(0).answer().complete(false); // the client closed its connection to broker 2
        assertThat(events).containsExactly("run begin-other", "refuse end-N", "run begin-N+1");
        assertThat(gate.gatedIds()).isZero();
    }

    @Test
    void aForwardedEndWhoseClientIsStillConnectedRunsBeforeTheRequestsBehindIt() {
        ForwardGate gate = gate(30_000, 4);
        submit(gate, "tx", FROM_2, "end-N");
        submit(gate, "tx", null, "end-N-retry");
        submit(gate, "tx", FROM_3, "begin-N+1");
        asked.get(0).answer().complete(true);
        assertThat(events).containsExactly("run end-N", "run end-N-retry");
        assertThat(asked).as("the next forwarded request has its own check").hasSize(2);
        assertThat(asked.get(1).brokerId()).isEqualTo(3);
        submit(gate, "tx", null, "end-N+1");
        assertThat(events).as("still behind the second check").hasSize(2);
        asked.get(1).answer().complete(true);
        assertThat(events).containsExactly("run end-N", "run end-N-retry", "run begin-N+1", "run end-N+1");
        assertThat(gate.gatedIds()).isZero();
        submit(gate, "tx", null, "later");
        assertThat(events).last().isEqualTo("run later");
    }

    @Test
    void anUnreachableOrSilentForwardingBrokerCountsAsClosed() {
        ForwardGate gate = gate(200, 4);
        submit(gate, "tx", FROM_2, "unreachable");
        asked.get(0).answer().completeExceptionally(new IOException("cannot connect to broker 2"));
        assertThat(events).containsExactly("refuse unreachable");

        submit(gate, "tx", FROM_2, "silent");
        submit(gate, "tx", null, "behind");
        Wait.until(Duration.ofSeconds(10), () -> events.size() == 3, "the check times out");
        assertThat(events).containsExactly("refuse unreachable", "refuse silent", "run behind");
        assertThat(gate.gatedIds()).isZero();
    }

    @Test
    void beyondTheBoundARequestIsRefusedAtOnce() {
        ForwardGate gate = gate(30_000, 2);
        submit(gate, "tx", FROM_2, "checked");
        submit(gate, "tx", null, "a");
        submit(gate, "tx", FROM_3, "b");
        submit(gate, "tx", null, "c");
        assertThat(events).containsExactly("refuse c");
        asked.get(0).answer().complete(true);
        asked.get(1).answer().complete(true);
        assertThat(events).containsExactly("refuse c", "run checked", "run a", "run b");
        assertThat(gate.gatedIds()).isZero();
    }

    @Test
    void aCommandThatThrowsDoesNotHoldItsId() {
        ForwardGate gate = gate(30_000, 4);
        gate.submit(
                "tx",
                FROM_2,
                () -> {
                    throw new IllegalStateException("boom");
                },
                () -> events.add("refuse"));
        submit(gate, "tx", null, "next");
        asked.get(0).answer().complete(true);
        assertThat(events).containsExactly("run next");
        assertThat(gate.gatedIds()).isZero();
    }
}
