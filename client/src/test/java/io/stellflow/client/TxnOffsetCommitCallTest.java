package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link TxnOffsetCommitCall} against a scripted coordinator and clock: coordinator errors look the
 * coordinator up again after the back-off, only uncommitted partitions are sent again, a fencing or
 * state error fails at once, and retries stop at the timeout with the last code.
 */
class TxnOffsetCommitCallTest {
    private static final TopicPartition P0 = new TopicPartition("in", 0);
    private static final TopicPartition P1 = new TopicPartition("in", 1);

    /** Scripted answers; every request and sleep is recorded. */
    private static final class Script implements TxnOffsetCommitCall.Wire {
        final ArrayDeque<Object> lookups = new ArrayDeque<>(); // HostPort or an error code (Short)
        /** An answer that never comes: the connection is lost. */
        static final Map<Integer, Short> LOST = Map.of(-1, Errors.NONE);

        final ArrayDeque<Map<Integer, Short>> answers = new ArrayDeque<>(); // codes per partition, or LOST
        final List<String> seen = new ArrayList<>();
        final List<TxnOffsetCommitRequest> requests = new ArrayList<>();
        final List<Long> sleeps = new ArrayList<>();
        long nowMs = 10_000;

        @Override
        public CompletableFuture<HostPort> findCoordinator(String groupId) {
            Object next = lookups.isEmpty() ? new HostPort("b1", 1) : lookups.poll();
            seen.add("find " + next);
            return next instanceof HostPort h
                    ? CompletableFuture.completedFuture(h)
                    : CompletableFuture.failedFuture(new StellflowException((Short) next, "scripted"));
        }

        @Override
        public CompletableFuture<OffsetCommitResponse> txnOffsetCommit(
                HostPort coordinator, TxnOffsetCommitRequest request) {
            requests.add(request);
            List<Integer> parts = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p -> parts.add(p.partition())));
            seen.add("commit " + parts + " at " + coordinator.host());
            Map<Integer, Short> codes = answers.poll();
            if (codes == LOST) {
                return CompletableFuture.failedFuture(
                        new StellflowException(StellflowException.NETWORK_ERROR, "connection lost"));
            }
            List<OffsetCommitResponse.OffsetCommitPartitionResponse> out = new ArrayList<>();
            for (int p : parts) {
                out.add(new OffsetCommitResponse.OffsetCommitPartitionResponse(p, codes.getOrDefault(p, Errors.NONE)));
            }
            return CompletableFuture.completedFuture(
                    new OffsetCommitResponse(List.of(new OffsetCommitResponse.OffsetCommitTopicResponse("in", out))));
        }

        TxnOffsetCommitCall call() {
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", "127.0.0.1:1");
            return new TxnOffsetCommitCall(this, ClientConfig.from(p, "test"), () -> nowMs, ms -> {
                sleeps.add(ms);
                nowMs += ms;
            });
        }
    }

    private static Map<TopicPartition, Long> offsets() {
        Map<TopicPartition, Long> m = new LinkedHashMap<>();
        m.put(P0, 10L);
        m.put(P1, 20L);
        return m;
    }

    private static void commit(Script s, long timeoutMs) {
        s.call().commit("tx", 1000, (short) 2, 7, "g", null, 5, offsets(), timeoutMs);
    }

    @Test
    void coordinatorErrorsLookItUpAgainAndOnlyUncommittedPartitionsAreSentAgain() {
        Script s = new Script();
        s.lookups.add(Errors.COORDINATOR_NOT_AVAILABLE); // __consumer_offsets being created
        s.lookups.add(new HostPort("b1", 1));
        s.lookups.add(new HostPort("b2", 2));
        s.lookups.add(new HostPort("b2", 2));
        s.answers.add(Map.of(0, Errors.NOT_COORDINATOR, 1, Errors.NOT_COORDINATOR)); // moved
        s.answers.add(Map.of(1, Errors.COORDINATOR_NOT_AVAILABLE)); // 0 committed, 1 not yet
        s.answers.add(Script.LOST);
        s.answers.add(Map.of()); // 1 committed

        commit(s, 60_000);

        assertThat(s.seen)
                .containsExactly(
                        "find 16",
                        "find b1:1",
                        "commit [0, 1] at b1",
                        "find b2:2",
                        "commit [0, 1] at b2",
                        "find b2:2",
                        "commit [1] at b2",
                        "find b1:1",
                        "commit [1] at b1");
        assertThat(s.sleeps).containsExactly(100L, 200L, 400L, 800L);
        TxnOffsetCommitRequest first = s.requests.get(0);
        assertThat(first.transactionalId()).isEqualTo("tx");
        assertThat(first.groupId()).isEqualTo("g");
        assertThat(first.producerId()).isEqualTo(1000);
        assertThat(first.producerEpoch()).isEqualTo((short) 2);
        assertThat(first.transactionSequence()).isEqualTo(7);
        assertThat(first.memberId()).isNull();
        assertThat(first.memberEpoch()).as("no member: no member check").isEqualTo(OffsetCommitRequest.NO_MEMBER_EPOCH);
        assertThat(first.topics().get(0).partitions())
                .extracting(OffsetCommitRequest.OffsetCommitPartition::offset)
                .containsExactly(10L, 20L);
    }

    @Test
    void aFencedProducerOrAClosedTransactionFailsAtOnce() {
        for (short code : new short[] {
            Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED, Errors.INVALID_TXN_STATE, Errors.UNKNOWN_MEMBER_ID
        }) {
            Script s = new Script();
            s.answers.add(Map.of(0, code, 1, code));
            assertThatThrownBy(() -> commit(s, 60_000))
                    .isInstanceOf(StellflowException.class)
                    .hasMessageContaining("in-0")
                    .hasMessageContaining(Errors.name(code))
                    .satisfies(e ->
                            assertThat(((StellflowException) e).errorCode()).isEqualTo(code));
            assertThat(s.requests).hasSize(1);
            assertThat(s.sleeps).isEmpty();
        }
    }

    @Test
    void retriesStopAtTheTimeoutWithTheLastCode() {
        Script s = new Script();
        for (int i = 0; i < 100; i++) {
            s.answers.add(Map.of(0, Errors.COORDINATOR_NOT_AVAILABLE, 1, Errors.COORDINATOR_NOT_AVAILABLE));
        }
        long start = s.nowMs;
        assertThatThrownBy(() -> commit(s, 3_000))
                .isInstanceOf(StellflowException.class)
                .hasMessageContaining("not done within 3000 ms")
                .satisfies(e ->
                        assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE));
        assertThat(s.nowMs - start).isEqualTo(3_000);
        assertThat(s.sleeps).containsExactly(100L, 200L, 400L, 800L, 1000L, 500L);
    }
}
