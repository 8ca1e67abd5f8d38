package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A partition's fetch state on its own: ready at creation, a backoff measured by difference on the
 * nano clock (negative readings included), and the OFFSET_OUT_OF_RANGE decisions (restart below the
 * leader's log start; reconcile once above its end; restart when out of range again right after).
 */
class FetchStateTest {
    private static final long BACKOFF = 50_000_000L;

    private static FetchState state(long nowNanos) {
        return new FetchState(null, 3, nowNanos); // the partition is only carried, never read here
    }

    @Test
    void readyAtCreationAndNotBeforeTheBackoffEndsOnTheClock() {
        long t0 = -9_000_000_000L;
        FetchState s = state(t0);
        assertThat(s.leaderEpoch()).isEqualTo(3);
        assertThat(s.truncating()).as("reconciles by epoch first").isTrue();
        assertThat(s.readyAt(t0)).isTrue();

        s.backoff(t0, BACKOFF);
        assertThat(s.readyAt(t0 + BACKOFF - 1)).isFalse();
        assertThat(s.notBeforeNanos()).isEqualTo(t0 + BACKOFF);
        assertThat(s.readyAt(t0 + BACKOFF)).isTrue();

        long nearWrap = Long.MAX_VALUE - BACKOFF / 2;
        s.backoff(nearWrap, BACKOFF);
        assertThat(s.readyAt(nearWrap + 1))
                .as("compared by difference across the wrap")
                .isFalse();
        assertThat(s.readyAt(nearWrap + BACKOFF)).isTrue();
    }

    @Test
    void belowTheLeadersLogStartTheLogRestartsThere() {
        FetchState s = state(0);
        s.truncating(false);
        assertThat(s.outOfRange(100, 5, 0, BACKOFF)).isEqualTo(FetchState.RESTART_AT_LEADER_LOG_START);
        assertThat(s.truncating()).isFalse();
        assertThat(s.readyAt(0)).as("no backoff").isTrue();
    }

    @Test
    void aboveTheLeadersEndItReconcilesOnceThenRestartsWhenOutOfRangeAgain() {
        FetchState s = state(0);
        s.truncating(false);
        assertThat(s.outOfRange(0, 10, 0, BACKOFF)).isEqualTo(FetchState.RECONCILE);
        assertThat(s.truncating()).isTrue();
        assertThat(s.readyAt(0)).as("the first time without a backoff").isTrue();

        s.truncating(false); // reconciled, fetched at the same offset again
        assertThat(s.outOfRange(0, 10, 0, BACKOFF)).isEqualTo(FetchState.RESTART_UNRECONCILABLE);
        assertThat(s.outOfRange(0, 10, 0, BACKOFF))
                .as("the memory ends with the restart")
                .isEqualTo(FetchState.RECONCILE);
    }

    @Test
    void anUnknownLeaderLogStartReconcilesWithABackoffAndAFetchEndsTheMemory() {
        FetchState s = state(0);
        assertThat(s.outOfRange(-1, 10, 0, BACKOFF)).isEqualTo(FetchState.RECONCILE);
        assertThat(s.readyAt(0)).isFalse();
        assertThat(s.outOfRange(-1, 10, 0, BACKOFF))
                .as("never restarts without the leader's log start")
                .isEqualTo(FetchState.RECONCILE);

        s.fetched();
        assertThat(s.outOfRange(0, 10, BACKOFF, BACKOFF)).isEqualTo(FetchState.RECONCILE);
        assertThat(s.readyAt(BACKOFF)).as("first time again: no backoff").isTrue();
    }

    @Test
    void removalAndInFlightAreRemembered() {
        FetchState s = state(0);
        assertThat(s.inFlight()).isFalse();
        s.inFlight(true);
        assertThat(s.inFlight()).isTrue();
        assertThat(s.removed()).isFalse();
        s.markRemoved();
        assertThat(s.removed()).isTrue();
    }
}
