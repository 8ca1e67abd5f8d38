package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import io.stellflow.storage.LeaderEpochCache.Entry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaderEpochCacheTest {
    @TempDir
    Path dir;

    @Test
    void assignKeepsBothColumnsStrictlyIncreasing() {
        LeaderEpochCache cache = LeaderEpochCache.empty(dir);
        assertThat(cache.assign(1, 0)).isTrue();
        assertThat(cache.assign(1, 5)).isFalse(); // same epoch continues
        assertThat(cache.assign(3, 10)).isTrue();
        assertThat(cache.assign(-1, 12)).isFalse(); // no epoch
        assertThat(cache.assign(2, 8)).isTrue(); // an older epoch rewrites history from 8 on
        assertThat(cache.entries()).containsExactly(new Entry(1, 0), new Entry(2, 8));
        assertThat(cache.latestEpoch()).isEqualTo(2);
    }

    @Test
    void endOffsetsFollowKafkasRules() {
        LeaderEpochCache cache = LeaderEpochCache.empty(dir);
        assertThat(cache.endOffsetFor(0, 10)).isEqualTo(EpochEndOffset.UNDEFINED);
        cache.assign(2, 5);
        cache.assign(4, 20);
        cache.assign(7, 30);
        assertThat(cache.endOffsetFor(7, 42)).isEqualTo(new EpochEndOffset(7, 42));
        assertThat(cache.endOffsetFor(4, 42)).isEqualTo(new EpochEndOffset(4, 30));
        assertThat(cache.endOffsetFor(5, 42)).isEqualTo(new EpochEndOffset(4, 30));
        assertThat(cache.endOffsetFor(1, 42)).isEqualTo(new EpochEndOffset(1, 5));
        assertThat(cache.endOffsetFor(8, 42)).isEqualTo(EpochEndOffset.UNDEFINED);
    }

    @Test
    void truncationFromEitherEnd() {
        LeaderEpochCache cache = LeaderEpochCache.empty(dir);
        cache.assign(1, 0);
        cache.assign(2, 10);
        cache.assign(3, 20);
        cache.truncateFromEnd(20);
        assertThat(cache.entries()).containsExactly(new Entry(1, 0), new Entry(2, 10));
        cache.truncateFromStart(15);
        assertThat(cache.entries()).containsExactly(new Entry(2, 15));
        cache.truncateFromStart(5); // below the first entry: nothing
        assertThat(cache.entries()).containsExactly(new Entry(2, 15));
        cache.clear();
        assertThat(cache.latestEpoch()).isEqualTo(-1);
    }

    @Test
    void flushWritesTheKafkaStyleFileAtomicallyAndLoadReadsIt() throws IOException {
        LeaderEpochCache cache = LeaderEpochCache.empty(dir);
        cache.assign(0, 0);
        cache.assign(3, 1500);
        cache.flush();
        Path file = dir.resolve(LeaderEpochCache.FILE_NAME);
        assertThat(Files.readString(file)).isEqualTo("0\n2\n0 0\n3 1500\n");
        assertThat(LeaderEpochCache.load(dir).entries()).isEqualTo(cache.entries());
    }

    @Test
    void aFileOutOfOrderOrWithAWrongCountIsCorrupt() throws IOException {
        Path file = dir.resolve(LeaderEpochCache.FILE_NAME);
        for (String bad : new String[] {"0\n2\n1 0\n", "0\n2\n3 10\n2 20\n", "0\n1\n1\n", "0\n"}) {
            Files.writeString(file, bad);
            assertThatThrownBy(() -> LeaderEpochCache.load(dir))
                    .isInstanceOf(CorruptCheckpointException.class)
                    .hasMessageContaining(file.toString());
        }
    }
}
