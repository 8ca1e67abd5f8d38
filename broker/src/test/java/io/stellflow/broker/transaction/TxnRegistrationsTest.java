package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.controller.image.MetadataImage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link TxnRegistrations}' cache: a hit needs the same epoch and leader epoch; a marker forgets the
 * entry; no hit while a registration of the producer's partition is out; the cache never holds
 * more than its bound, the eldest registration evicted first (a miss then registers again), also
 * under concurrent registrations.
 */
class TxnRegistrationsTest {
    private static TxnRegistrations registrations(int maxCached) {
        return new TxnRegistrations(1, null, () -> MetadataImage.EMPTY, () -> null, maxCached);
    }

    private static TransactionPartition tp(int partition) {
        return new TransactionPartition("t", partition);
    }

    @Test
    void aHitNeedsTheSameEpochAndLeaderEpochAndAMarkerForgetsIt() {
        TxnRegistrations r = registrations(10);
        r.remember(1000, (short) 2, tp(0), 5, 42);
        assertThat(r.cached(1000, (short) 2, tp(0), 5)).isEqualTo(42);
        assertThat(r.cached(1000, (short) 3, tp(0), 5)).as("another epoch").isEqualTo(-1);
        assertThat(r.cached(1000, (short) 2, tp(0), 6))
                .as("another leader epoch")
                .isEqualTo(-1);
        assertThat(r.cached(1000, (short) 2, tp(1), 5)).as("another partition").isEqualTo(-1);
        r.forget(1000, tp(0));
        assertThat(r.cached(1000, (short) 2, tp(0), 5)).isEqualTo(-1);
        assertThat(r.cachedCount()).isZero();
    }

    @Test
    void aProduceV2SequenceHitsOnlyTheRegistrationOfItsTransaction() {
        TxnRegistrations r = registrations(10);
        r.remember(1000, (short) 2, tp(0), 5, 42);
        assertThat(r.cached(1000, (short) 2, tp(0), 5, 42)).isEqualTo(42);
        assertThat(r.cached(1000, (short) 2, tp(0), 5, -1))
                .as("v0/v1: no sequence")
                .isEqualTo(42);
        assertThat(r.cached(1000, (short) 2, tp(0), 5, 41))
                .as("a Produce of an earlier transaction: the coordinator decides")
                .isEqualTo(-1);
        assertThat(r.cached(1000, (short) 2, tp(0), 5, 43)).isEqualTo(-1);
    }

    @Test
    void aRegistrationInFlightHidesTheCacheUntilEveryAnnouncedOneIsReported() {
        TxnRegistrations r = registrations(10);
        r.remember(1000, (short) 2, tp(0), 5, 42);
        r.registering(1000, tp(0));
        r.registering(1000, tp(0));
        assertThat(r.cached(1000, (short) 2, tp(0), 5))
                .as("a later batch must queue behind the registering one")
                .isEqualTo(-1);
        assertThat(r.cached(1000, (short) 2, tp(1), 5)).isEqualTo(-1);
        r.registered(1000, (short) 2, tp(0), 5, 43);
        assertThat(r.cached(1000, (short) 2, tp(0), 5))
                .as("one registration still out")
                .isEqualTo(-1);
        r.registered(1000, (short) 2, tp(0), 5, -25); // refused: ends the announcement, caches nothing
        assertThat(r.inFlightCount()).isZero();
        assertThat(r.cached(1000, (short) 2, tp(0), 5)).isEqualTo(43);
        assertThatThrownBy(() -> r.registered(1000, (short) 2, tp(0), 5, 43))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no registration of");
    }

    @Test
    void theEldestRegistrationIsEvictedBeyondTheBound() {
        TxnRegistrations r = registrations(3);
        for (int p = 0; p < 4; p++) {
            r.remember(1000 + p, (short) 0, tp(p), 1, p);
        }
        assertThat(r.cachedCount()).isEqualTo(3);
        assertThat(r.cached(1000, (short) 0, tp(0), 1))
                .as("evicted: registers again")
                .isEqualTo(-1);
        for (int p = 1; p < 4; p++) {
            assertThat(r.cached(1000 + p, (short) 0, tp(p), 1)).isEqualTo(p);
        }
        // Registering the evicted one again evicts the next eldest.
        r.remember(1000, (short) 0, tp(0), 1, 0);
        assertThat(r.cached(1000, (short) 0, tp(0), 1)).isZero();
        assertThat(r.cached(1001, (short) 0, tp(1), 1)).isEqualTo(-1);
        assertThat(r.cachedCount()).isEqualTo(3);
    }

    @Test
    void concurrentRegistrationsNeverExceedTheBound() throws Exception {
        TxnRegistrations r = registrations(100);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long producer = t;
                done.add(pool.submit(() -> {
                    for (int p = 0; p < 5_000; p++) {
                        r.remember(producer, (short) 0, tp(p), 0, p);
                        r.cached(producer, (short) 0, tp(p / 2), 0);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(r.cachedCount()).isEqualTo(100);
    }

    @Test
    void theBoundMustBePositive() {
        assertThatThrownBy(() -> registrations(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxCached must be >= 1: 0");
    }
}
